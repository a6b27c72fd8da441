import { aQuery, replyError } from "../../agent/dns-lookup.js";
import type { Exec } from "../../exec.js";
import { runAt } from "./pod-run.js";

/**
 * One TCP connection from a namespace to ip:port; the first line the server answers ("" when none came within
 * `timeoutS`). The lab's echo server answers `<pod name> <peer>` on TCP 9000.
 */
export async function tcpAnswer(exec: Exec, at: readonly string[], ip: string, port: number, timeoutS = 2) {
  const out = await runAt(exec, at, [
    ...["timeout", String(timeoutS), "bash", "-c"],
    `exec 3<>/dev/tcp/${ip}/${port} && head -1 <&3`,
  ]);
  return out.trim();
}

/** `tries` connections; how many got an answer. */
export async function tcpSuccesses(
  exec: Exec,
  at: readonly string[],
  ip: string,
  port: number,
  tries: number,
) {
  let ok = 0;
  for (let i = 0; i < tries; i++) if (await tcpAnswer(exec, at, ip, port)) ok++;
  return ok;
}

/**
 * The shell line for one A query to server:53 over UDP from where it runs: printf writes the query (every byte an
 * escape), dd hands it to bash's /dev/udp socket in one write (printf alone writes in pieces, each its own
 * datagram), then dd reads one datagram back (2 s at most) and od prints it as hex. Only bash and coreutils, which
 * a netns lab's host and every kind node have (dig is on neither a kindest/node nor our node image).
 */
export function udpQueryLine(server: string, query: Buffer): string {
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(server)) throw new Error(`bad DNS server address ${server}`);
  const bytes = [...query].map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
  return `exec 3<>/dev/udp/${server}/53 && printf '${bytes}' | dd bs=4096 count=1 iflag=fullblock status=none >&3 && timeout 2 dd bs=4096 count=1 <&3 2>/dev/null | od -An -v -tx1`;
}

/** od's hex dump back into bytes. */
export const fromHexDump = (dump: string): Buffer =>
  Buffer.from(
    dump
      .split(/\s+/)
      .filter((x) => /^[0-9a-f]{2}$/.test(x))
      .map((x) => Number.parseInt(x, 16)),
  );

/** One A lookup of `name` through `server` (one try, 2 s): whether it came back with at least one record. */
export async function dnsAnswers(exec: Exec, at: readonly string[], server: string, name: string) {
  const id = Math.floor(Math.random() * 0x10000);
  const out = await runAt(exec, at, ["bash", "-c", udpQueryLine(server, aQuery(name, id))]);
  return replyError(fromHexDump(out), id) === undefined;
}

// Connect times in microseconds to each target in turn (interleaved, so drift hits all alike); five warm-up
// rounds are dropped; -1 marks a failed connect. Each connect is a new connection, so its SYN is the first
// packet of a new conntrack entry and walks the nat rules. Runs with the lab's node binary in the namespace
// (the proxy benchmark runs it too). Arguments: JSON [[host, port], ...] and the number of rounds.
export const CONNECT_TIMES_SCRIPT = `
const net = require("node:net");
const [targets, n] = [JSON.parse(process.argv[1]), +process.argv[2]];
const once = ([host, port]) => new Promise((resolve) => {
  let us = -1;
  const t0 = process.hrtime.bigint();
  const s = net.connect({ host, port });
  s.setTimeout(2000, () => s.destroy());
  s.on("connect", () => { us = Number(process.hrtime.bigint() - t0) / 1000; s.end(); });
  s.on("error", () => {});
  s.on("close", () => resolve(us));
  s.resume();
});
(async () => {
  const out = targets.map(() => []);
  for (let i = 0; i < n + 5; i++)
    for (const [k, t] of targets.entries()) { const us = await once(t); if (i >= 5) out[k].push(us); }
  console.log(JSON.stringify(out));
})();
`;

/** Connect times (µs) from a pod to each ip:port, failed connects dropped; `node` runs Node in the pod's network. */
export async function connectTimes(
  exec: Exec,
  node: readonly string[],
  targets: readonly [string, number][],
  n: number,
): Promise<number[][]> {
  const out = await exec([...[...node, "-e", CONNECT_TIMES_SCRIPT], ...[JSON.stringify(targets), String(n)]]);
  return (JSON.parse(out) as number[][]).map((xs) => xs.filter((x) => x >= 0));
}

export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
}
