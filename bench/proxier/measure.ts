// What is measured on one running proxy: its start-up (full) sync, single-endpoint (partial) syncs, the
// bytes each sync sends to the kernel (ebpf mode: the map entries it writes), and the first-packet latency
// of a TCP connect through its rules.
import { setTimeout as sleep } from "node:timers/promises";
import { CONNECT_TIMES_SCRIPT } from "@switchyard/lab/scenarios";
import { inClient } from "./client.js";
import { type BenchApi, flipOneEndpoint } from "./cluster.js";
import {
  type HistogramTotals,
  type LoggedWrite,
  logsItsWrites,
  type Mode,
  type ProxyUnderTest,
  type SyncCounters,
} from "./proxies.js";
import type { KernelWriteLog } from "./shim.js";

export interface FullSync {
  /** Seconds, from the proxy's own histogram. */
  readonly seconds: number;
  /** False when two syncs fell between two scrapes and only their sum is known. */
  readonly exact: boolean;
  /** Proxy start to the last Service answering, seconds (includes informer start-up). */
  readonly readySeconds: number;
  /** The largest single IPv4 write (iptables-restore input or nft transaction) during start-up. */
  readonly bytes: number;
  readonly lines: number;
  /**
   * How long that largest write took, ms: its tool's run (iptables-restore, `nft -f`) timed by the
   * wrapper, or for our netlink writer the write as the proxy logs it (encoding, send, kernel).
   */
  readonly toolMs: number;
  /**
   * The kernel's system time for that write: the tool's (wrapper's `times`), or ours during a netlink write, ms;
   * undefined in ebpf mode, whose log does not say.
   */
  readonly kernelMs: number | undefined;
  /** ebpf mode: the most map entries one start-up sync wrote (bytes and lines are 0 there). */
  readonly entries?: number;
}

export interface PartialSample {
  readonly seconds: number;
  /** iptables: the sync went to the partial histogram; nftables has no such split (undefined). */
  readonly partial: boolean | undefined;
  readonly bytes: number;
  readonly lines: number;
  readonly writes: number;
  /** Time spent in the kernel tools (or our netlink writer) during this sync, ms. */
  readonly toolMs: number;
  /** The kernel's system time for this sync's writes, measured as for the full sync, ms (undefined: ebpf). */
  readonly kernelMs: number | undefined;
  /** ebpf mode: the map entries this sync wrote or deleted. */
  readonly entries?: number;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
/** The sum, or undefined when any part is unknown. */
const sumKnown = (xs: readonly (number | undefined)[]) =>
  xs.some((x) => x === undefined) ? undefined : sum(xs as number[]);

const delta = (a: HistogramTotals, b: HistogramTotals) => ({ count: b.count - a.count, sum: b.sum - a.sum });

async function scrape(p: ProxyUnderTest): Promise<SyncCounters | undefined> {
  if (p.exited()) throw new Error(`${p.impl} ${p.mode} exited:\n${p.log().slice(-3000)}`);
  try {
    return await p.metrics();
  } catch {
    return undefined; // not listening yet
  }
}

/** True once a connect to `ip`:80 from the client (in ebpf mode's cgroup) is answered by one of the pods. */
async function answers(p: ProxyUnderTest, ip: string): Promise<boolean> {
  try {
    const out =
      p.cgroup === undefined
        ? await p.net.probe(ip, 80, 1, p.net.client, 1000)
        : await p.net.probeInCgroup(p.cgroup, ip, 80, 1, p.net.client);
    return out.some((a) => a.startsWith("pod-"));
  } catch {
    return false;
  }
}

/** The proxy's last "sync failed" log line, shortened, for a failed run's row. */
function syncFailure(log: string): string {
  const line = log.split("\n").findLast((l) => l.includes("sync failed")) ?? "";
  try {
    const e = JSON.parse(line) as { error?: unknown; err?: unknown };
    return `sync failed: ${String(e.error ?? e.err ?? line)}`.slice(0, 300);
  } catch {
    return `sync failed: ${line.slice(0, 300)}`;
  }
}

/**
 * Waits for the first sync and for Service #1 and the last Service to answer, then for the syncs to
 * settle; the full sync is the biggest single step of the sync histogram seen while scraping every 250 ms.
 */
export async function waitForFullSync(
  p: ProxyUnderTest,
  shim: KernelWriteLog,
  ips: readonly string[],
  timeoutMs: number,
): Promise<FullSync> {
  const deadline = Date.now() + timeoutMs;
  let last: SyncCounters | undefined;
  const steps: { count: number; sum: number }[] = [];
  let readyAt = 0;
  let quietSince = 0;
  let mostEntries = 0;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`${p.impl} ${p.mode}: no full sync in ${timeoutMs} ms`);
    const now = await scrape(p);
    mostEntries = Math.max(mostEntries, now?.bpfEntriesWritten ?? 0);
    // A refused map write (a full map) is refused again on every retry: no use waiting out the timeout.
    if ((now?.bpfSyncFailures ?? 0) > 0) throw new Error(`${p.impl} ${p.mode}: ${syncFailure(p.log())}`);
    if (now && last && now.all.count !== last.all.count) {
      steps.push(delta(last.all, now.all));
      quietSince = Date.now();
    }
    if (now) last = now;
    if (!readyAt && last && last.all.count > 0) {
      let all = true;
      for (const ip of ips) all = all && (await answers(p, ip));
      if (all) {
        readyAt = Date.now();
        quietSince = readyAt;
      }
    }
    // settled: answering, and no sync for 2 s
    if (readyAt && Date.now() - quietSince > 2000) break;
    await sleep(250);
  }
  if (!last) throw new Error("no metrics");
  if (steps.length === 0) steps.push(last.all); // the first scrape already saw the sync(s)
  const biggest = steps.reduce((a, b) => (b.sum > a.sum ? b : a));
  const full = last.full;
  const exactFromFull = full !== undefined && full.count === 1;
  await sleep(300); // let the wrappers' background loggers finish
  const writes = shim.between(p.startedAt, readyAt);
  const big = writes.reduce((a, b) => (b.bytes > a.bytes ? b : a), {
    bytes: 0,
    lines: 0,
    ms: 0,
    kernelMs: 0,
  });
  const logged = p.writes().filter((w) => w.fullSync);
  const bigLogged = logged.reduce<{ elapsedMs: number; systemMs: number | undefined }>(
    (a, b) => (b.elapsedMs > a.elapsedMs ? b : a),
    { elapsedMs: 0, systemMs: 0 },
  );
  return {
    seconds: exactFromFull ? full.sum : biggest.sum,
    exact: exactFromFull || biggest.count === 1,
    readySeconds: (readyAt - p.startedAt) / 1000,
    bytes: big.bytes,
    lines: big.lines,
    toolMs: logsItsWrites(p.impl, p.mode) ? bigLogged.elapsedMs : big.ms,
    kernelMs: logsItsWrites(p.impl, p.mode) ? bigLogged.systemMs : big.kernelMs,
    // The start-up sync's gauge, unless a later sync replaced it between two scrapes; then the entries the maps
    // hold stand in (a first sync into fresh maps wrote every one of them).
    ...(last.bpfEntries !== undefined ? { entries: mostEntries || last.bpfEntries } : {}),
  };
}

/**
 * `indices.length` single-endpoint changes, one at a time: change, wait for exactly one sync, read its
 * duration from the histogram, then leave more than minSyncPeriod (1 s) before the next change.
 * `flipped` carries each Service's current endpoint set across proxies (the cluster is shared).
 */
export async function samplePartialSyncs(
  api: BenchApi,
  p: ProxyUnderTest,
  shim: KernelWriteLog,
  indices: readonly number[],
  flipped: Map<number, boolean>,
): Promise<PartialSample[]> {
  const samples: PartialSample[] = [];
  for (const i of indices) {
    const before = await scrape(p);
    if (!before) throw new Error("metrics went away");
    const logged0 = p.writes().length;
    const t0 = Date.now();
    const toAlt = !flipped.get(i);
    await flipOneEndpoint(api, i, toAlt);
    flipped.set(i, toAlt);
    let after: SyncCounters | undefined;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      await sleep(100);
      const now = await scrape(p);
      if (now && now.all.count > before.all.count) {
        after = now;
        break;
      }
    }
    const t1 = Date.now();
    const logged: LoggedWrite[] = p.writes().slice(logged0);
    if (!after) throw new Error(`${p.impl} ${p.mode}: no sync after an endpoint change`);
    const d = delta(before.all, after.all);
    await sleep(1200);
    if (d.count === 1) {
      const writes = shim.between(t0, t1);
      samples.push({
        seconds: d.sum,
        partial: before.partial && after.partial ? after.partial.count > before.partial.count : undefined,
        bytes: writes.reduce((s, w) => s + w.bytes, 0),
        lines: writes.reduce((s, w) => s + w.lines, 0),
        writes: writes.length,
        toolMs: sum(logsItsWrites(p.impl, p.mode) ? logged.map((w) => w.elapsedMs) : writes.map((w) => w.ms)),
        kernelMs: logsItsWrites(p.impl, p.mode)
          ? sumKnown(logged.map((w) => w.systemMs))
          : sum(writes.map((w) => w.kernelMs)),
        ...(after.bpfEntriesWritten !== undefined ? { entries: after.bpfEntriesWritten } : {}),
      });
    }
  }
  return samples;
}

/** Connect times (µs) to each ClusterIP from the client (client.ts); failed connects are dropped. */
export function connectLatency(p: ProxyUnderTest, ips: readonly string[], n: number): number[][] {
  const targets = JSON.stringify(ips.map((ip) => [ip, 80]));
  const out = inClient(p, [process.execPath, "-e", CONNECT_TIMES_SCRIPT, targets, String(n)]);
  return (JSON.parse(out) as number[][]).map((xs) => xs.filter((x) => x >= 0));
}

const iptablesOf = (mode: Mode) =>
  mode === "iptables-legacy" ? "/usr/sbin/iptables-legacy" : "/usr/sbin/iptables-nft";

/** 1-based position of each ClusterIP's rule in the nat KUBE-SERVICES chain (iptables mode). */
export function kubeServicesPositions(p: ProxyUnderTest, ips: readonly string[]): (number | undefined)[] {
  const rules = p.net
    .in(p.net.node, [iptablesOf(p.mode), "-w", "-t", "nat", "-S", "KUBE-SERVICES"])
    .split("\n")
    .filter((l) => l.startsWith("-A KUBE-SERVICES"));
  return ips.map((ip) => {
    const k = rules.findIndex((l) => l.includes(` -d ${ip}/32 `));
    return k < 0 ? undefined : k + 1;
  });
}

/** How many rules the nat KUBE-SERVICES chain has (iptables mode). */
export function kubeServicesLength(p: ProxyUnderTest): number {
  return p.net
    .in(p.net.node, [iptablesOf(p.mode), "-w", "-t", "nat", "-S", "KUBE-SERVICES"])
    .split("\n")
    .filter((l) => l.startsWith("-A KUBE-SERVICES")).length;
}
