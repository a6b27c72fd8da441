// New connections per second through a ClusterIP: connect-rate.py (TCP_CRR-style: connect, read the pod's
// answer, close, in a loop) for a fixed time with a few workers, from the client (in ebpf mode's cgroup), and
// the same loop straight to the pods' IPs: the ceiling the client, the pods' servers and the kernel reach
// with no Service translation on the way. Rounds alternate the two (ABBA for two rounds), so a change in the
// machine's load during the run falls on both alike. The loop is Python because it costs the least of the two
// we tried per connection in user space (about 15 µs against Node's 60 µs, 2026-12-06), so more of the time
// goes to the path being measured; the result carries the client's own CPU per connection so the reader can
// check.
import { join } from "node:path";
import { inClient } from "./client.js";
import { REAL_POD_IPS } from "./cluster.js";
import type { ProxyUnderTest } from "./proxies.js";

const SCRIPT = join(import.meta.dirname, "connect-rate.py");

export interface ConnectLoop {
  readonly ok: number;
  readonly failed: Readonly<Record<string, number>>;
  readonly seconds: number;
  /** Successful connections per second. */
  readonly perSecond: number;
  /** The client's own (Python's) user CPU per successful connection, µs. */
  readonly clientUserUs: number;
  /** The client's system CPU per connection, µs: its syscalls, and the packets' path run in its context. */
  readonly clientSystemUs: number;
}

export interface ConnectRate {
  readonly workers: number;
  /** Through the ClusterIP. */
  readonly service: ConnectLoop;
  /** Straight to the pods' IPs, taken in turn. */
  readonly ceiling: ConnectLoop;
}

/** connect-rate.py's output. */
interface LoopRun {
  ok: number;
  failed: Record<string, number>;
  seconds: number;
  clientUserS: number;
  clientSystemS: number;
}

function run(p: ProxyUnderTest, targets: readonly string[], seconds: number, workers: number): LoopRun {
  const argv = ["python3", SCRIPT, String(seconds), String(workers), ...targets];
  return JSON.parse(inClient(p, argv, (seconds + 30) * 1000)) as LoopRun;
}

/** Several runs of one loop as one: their counts and times added. */
function total(runs: readonly LoopRun[]): ConnectLoop {
  const add = (f: (r: LoopRun) => number) => runs.reduce((a, r) => a + f(r), 0);
  const ok = add((r) => r.ok);
  const failed: Record<string, number> = {};
  for (const r of runs)
    for (const [name, n] of Object.entries(r.failed)) failed[name] = (failed[name] ?? 0) + n;
  const per = (s: number) => (ok > 0 ? (s * 1e6) / ok : 0);
  return {
    ok,
    failed,
    seconds: add((r) => r.seconds),
    perSecond: ok / add((r) => r.seconds),
    clientUserUs: per(add((r) => r.clientUserS)),
    clientSystemUs: per(add((r) => r.clientSystemS)),
  };
}

export function connectRate(
  p: ProxyUnderTest,
  clusterIP: string,
  options: { seconds: number; workers: number; rounds: number },
): ConnectRate {
  const { seconds, workers, rounds } = options;
  const service: LoopRun[] = [];
  const ceiling: LoopRun[] = [];
  const serviceRun = () => service.push(run(p, [`${clusterIP}:80`], seconds, workers));
  const ceilingRun = () =>
    ceiling.push(
      run(
        p,
        REAL_POD_IPS.map((ip) => `${ip}:80`),
        seconds,
        workers,
      ),
    );
  for (let k = 0; k < rounds; k++) {
    // A B, B A, A B, ...
    const order = k % 2 === 0 ? [serviceRun, ceilingRun] : [ceilingRun, serviceRun];
    for (const step of order) step();
  }
  return { workers, service: total(service), ceiling: total(ceiling) };
}

/** "n failed (ECONNRESET 3, ETIMEDOUT 1)", or "" when none did. */
export function failures(l: ConnectLoop): string {
  const parts = Object.entries(l.failed).map(([name, n]) => `${name} ${n}`);
  const n = Object.values(l.failed).reduce((a, b) => a + b, 0);
  return n === 0 ? "" : `${n} failed (${parts.join(", ")})`;
}
