// Peak memory of a server as a container would count it: the process's own peaks from /proc (VmHWM, and
// the anonymous and file-backed parts of its resident set, sampled), and, where this machine has cgroup v1
// and we are root, a memory cgroup of its own whose limit can be set like a pod's
// (memory.max_usage_in_bytes is what the kernel charged it at most, page cache included).
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const CGROUP_V1_MEMORY = "/sys/fs/cgroup/memory";
const MiB = 1024 * 1024;

/** A fresh memory cgroup, or undefined where there is no writable cgroup v1 memory controller. */
export function makeCgroup(name: string, limitBytes?: number): string | undefined {
  if (!existsSync(join(CGROUP_V1_MEMORY, "memory.max_usage_in_bytes"))) return undefined;
  const dir = join(CGROUP_V1_MEMORY, `switchyard-bench-${name}-${process.pid}`);
  try {
    mkdirSync(dir);
    if (limitBytes) writeFileSync(join(dir, "memory.limit_in_bytes"), String(limitBytes));
    return dir;
  } catch {
    return undefined;
  }
}

/** Removes a cgroup once its processes are gone (the kernel refuses while any is left). */
export async function removeCgroup(dir: string | undefined): Promise<void> {
  if (!dir) return;
  for (let i = 0; i < 50; i++) {
    try {
      rmdirSync(dir);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export interface MemoryPeaks {
  /** VmHWM at the end: the process's peak resident set over its whole life, MiB. */
  vmHwm: number;
  /** Peaks of the sampled resident set and its parts (anonymous: heap and malloc; file: mapped binary). */
  rss: number;
  rssAnon: number;
  rssFile: number;
  cgroup?: {
    limitMiB: number | undefined;
    /** memory.max_usage_in_bytes: the most the kernel ever charged the cgroup. */
    maxUsage: number;
    /** memory.stat at the sampled peak of usage: rss (anonymous) and cache (page cache). */
    rssAtPeak: number;
    cacheAtPeak: number;
    /** Times the limit was hit (memory.failcnt) and OOM kills (memory.oom_control). */
    failcnt: number;
    oomKills: number;
  };
}

function statusKb(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const line of readFileSync(`/proc/${pid}/status`, "utf8").split("\n")) {
      const m = /^(\w+):\s+(\d+) kB/.exec(line);
      if (m) out[m[1] as string] = Number(m[2]);
    }
  } catch {
    // Gone.
  }
  return out;
}

function readNumber(path: string): number {
  try {
    return Number(readFileSync(path, "utf8").trim());
  } catch {
    return Number.NaN;
  }
}

function readStat(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const line of readFileSync(join(dir, "memory.stat"), "utf8").split("\n")) {
      const [k, v] = line.split(" ");
      if (k && v) out[k] = Number(v);
    }
  } catch {
    // Gone.
  }
  return out;
}

/** Samples a process (and its cgroup) every `everyMs` until stopped; stop() returns the peaks. */
export function sampleMemory(
  pid: number,
  cgroup: string | undefined,
  limitBytes: number | undefined,
  everyMs = 250,
): { stop(): MemoryPeaks } {
  let rss = 0;
  let rssAnon = 0;
  let rssFile = 0;
  let usagePeak = 0;
  let rssAtPeak = 0;
  let cacheAtPeak = 0;
  const tick = () => {
    const s = statusKb(pid);
    rss = Math.max(rss, (s.VmRSS ?? 0) / 1024);
    rssAnon = Math.max(rssAnon, (s.RssAnon ?? 0) / 1024);
    rssFile = Math.max(rssFile, (s.RssFile ?? 0) / 1024);
    if (cgroup) {
      const usage = readNumber(join(cgroup, "memory.usage_in_bytes"));
      if (usage > usagePeak) {
        usagePeak = usage;
        const stat = readStat(cgroup);
        rssAtPeak = (stat.rss ?? 0) / MiB;
        cacheAtPeak = (stat.cache ?? 0) / MiB;
      }
    }
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return {
    stop() {
      tick();
      clearInterval(timer);
      const peaks: MemoryPeaks = { vmHwm: (statusKb(pid).VmHWM ?? 0) / 1024, rss, rssAnon, rssFile };
      if (cgroup) {
        const oom = /oom_kill (\d+)/.exec(safeRead(join(cgroup, "memory.oom_control")))?.[1];
        peaks.cgroup = {
          limitMiB: limitBytes ? limitBytes / MiB : undefined,
          maxUsage: readNumber(join(cgroup, "memory.max_usage_in_bytes")) / MiB,
          rssAtPeak,
          cacheAtPeak,
          failcnt: readNumber(join(cgroup, "memory.failcnt")),
          oomKills: Number(oom ?? 0),
        };
      }
      return peaks;
    },
  };
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** One line of memory-probe.mjs's output. */
export interface ProbeSample {
  t: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  spaces: Record<string, number>;
}

export interface ProbeSummary {
  heapSizeLimit: number;
  /** The sample with the highest rss, and the highest of each field over the run. */
  atPeakRss: ProbeSample | undefined;
  max: Omit<ProbeSample, "t" | "spaces">;
  /** The lowest heapUsed seen after startup: roughly what stays live. */
  minHeapUsed: number;
}

export function readProbe(path: string, until = Number.POSITIVE_INFINITY): ProbeSummary | undefined {
  if (!existsSync(path)) return undefined;
  // A server that starts itself again (switchyard-dns re-execs once with its Node flags) loads the probe
  // twice: each start writes a header line; the samples after the last one are the server's.
  const lines = readFileSync(path, "utf8").trim().split("\n");
  let header: { heapSizeLimit?: number } = {};
  let samples: ProbeSample[] = [];
  for (const line of lines) {
    const value = JSON.parse(line) as ProbeSample & { heapSizeLimit?: number };
    if (value.heapSizeLimit !== undefined) {
      header = value;
      samples = [];
    } else if (value.t <= until) samples.push(value);
  }
  const max = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
  let atPeakRss: ProbeSample | undefined;
  for (const s of samples) {
    for (const k of Object.keys(max) as (keyof typeof max)[]) max[k] = Math.max(max[k], s[k]);
    if (!atPeakRss || s.rss > atPeakRss.rss) atPeakRss = s;
  }
  // Skip the first few seconds (module loading and the first list) for the live floor.
  const later = samples.slice(Math.min(10, Math.floor(samples.length / 3)));
  const minHeapUsed = later.reduce((m, s) => Math.min(m, s.heapUsed), Number.POSITIVE_INFINITY);
  return { heapSizeLimit: header.heapSizeLimit ?? Number.NaN, atPeakRss, max, minHeapUsed };
}
