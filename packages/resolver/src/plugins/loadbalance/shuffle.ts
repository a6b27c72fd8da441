import type { ResourceRecord } from "../../wire/message.js";

/** Picks an index in [0, n); injectable so tests can pin the order. */
export type RandomIndex = (n: number) => number;

export const mathRandomIndex: RandomIndex = (n) => Math.floor(Math.random() * n);

/**
 * CoreDNS's round_robin order for one section: CNAMEs first, then other types, then the A/AAAA records
 * shuffled together, then MX shuffled. Returns a new array.
 */
export function roundRobin(records: readonly ResourceRecord[], random: RandomIndex): ResourceRecord[] {
  const cname: ResourceRecord[] = [];
  const address: ResourceRecord[] = [];
  const mx: ResourceRecord[] = [];
  const rest: ResourceRecord[] = [];
  for (const rr of records) {
    if (rr.type === "CNAME") cname.push(rr);
    else if (rr.type === "A" || rr.type === "AAAA") address.push(rr);
    else if (rr.type === "MX") mx.push(rr);
    else rest.push(rr);
  }
  return [...cname, ...rest, ...shuffle(address, random), ...shuffle(mx, random)];
}

function shuffle<T>(items: T[], random: RandomIndex): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = random(i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
