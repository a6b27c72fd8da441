import type { Exec } from "../netns/exec.js";
import { inNetns } from "./lab-handle.js";

/**
 * One TCP connection from a namespace to ip:port; the first line the server answers ("" when none came within
 * `timeoutS`). The lab's echo server answers `<pod name> <peer>` on TCP 9000.
 */
export async function tcpAnswer(exec: Exec, netns: string, ip: string, port: number, timeoutS = 2) {
  const out = await inNetns(exec, netns, [
    ...["timeout", String(timeoutS), "bash", "-c"],
    `exec 3<>/dev/tcp/${ip}/${port} && head -1 <&3`,
  ]);
  return out.trim();
}

/** `tries` connections; how many got an answer. */
export async function tcpSuccesses(exec: Exec, netns: string, ip: string, port: number, tries: number) {
  let ok = 0;
  for (let i = 0; i < tries; i++) if (await tcpAnswer(exec, netns, ip, port)) ok++;
  return ok;
}

/** An A lookup through `server` with dig (one try, 2 s): the addresses, [] on failure. */
export async function digA(exec: Exec, netns: string, server: string, name: string): Promise<string[]> {
  const out = await inNetns(exec, netns, ["dig", `@${server}`, "+short", "+time=2", "+tries=1", name]);
  return out.split("\n").filter((l) => /^\d+\.\d+\.\d+\.\d+$/.test(l.trim()));
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

/** Connect times (µs) from a namespace to each ip:port, failed connects dropped. */
export async function connectTimes(
  exec: Exec,
  netns: string,
  targets: readonly [string, number][],
  n: number,
): Promise<number[][]> {
  const out = await exec([
    ...["ip", "netns", "exec", netns, process.execPath, "-e", CONNECT_TIMES_SCRIPT],
    ...[JSON.stringify(targets), String(n)],
  ]);
  return (JSON.parse(out) as number[][]).map((xs) => xs.filter((x) => x >= 0));
}

export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
}
