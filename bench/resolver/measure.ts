// One measured dnsperf run against a running server: the client's numbers plus what the server (and the
// upstream, and everything else on the machine) spent meanwhile.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { type DnsperfOptions, type DnsperfResult, runDnsperf } from "./dnsperf.js";
import { type GcSummary, gcPauses, summarizePauses } from "./gc.js";
import { cpuSeconds, machineBusySeconds, peakRssMiB, pssMiB, type ServerKind } from "./servers.js";

export interface Measured extends DnsperfResult {
  seconds: number;
  /** Server CPU, in cores (user+sys seconds / wall seconds). */
  serverCores: number;
  upstreamCores: number;
  /** Every other process on the machine, in cores: machine busy minus server, upstream and dnsperf. */
  otherCores: number;
  peakRssMiB: number;
  /** The highest PSS sampled (every 500 ms) during the run, summed over the server's processes. */
  peakPssMiB: number;
  /** The server's GC pauses during the run, when its log carries its GC trace. */
  gc?: GcSummary;
}

/** A server whose log holds its GC trace (gc.ts's GC_TRACE), read for the stretch a run wrote. */
export interface TracedServer {
  kind: ServerKind;
  log: string;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** The bytes of `path` from offset `from` to `to`. */
function readBetween(path: string, from: number, to: number): string {
  const length = to - from;
  if (length <= 0) return "";
  const buf = Buffer.alloc(length);
  const fd = openSync(path, "r");
  try {
    readSync(fd, buf, 0, length, from);
  } finally {
    closeSync(fd);
  }
  return buf.toString("utf8");
}

export async function measure(
  serverPid: number,
  upstreamPid: number | undefined,
  o: DnsperfOptions,
  traced?: TracedServer,
): Promise<Measured> {
  const logFrom = traced ? sizeOf(traced.log) : 0;
  let logTo = 0;
  const cpu0 = cpuSeconds(serverPid);
  const up0 = upstreamPid ? cpuSeconds(upstreamPid) : 0;
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  let peakPss = pssMiB(serverPid);
  const sampler = setInterval(() => {
    peakPss = Math.max(peakPss, pssMiB(serverPid));
  }, 500);
  let seconds = 0;
  let server = 0;
  let upstream = 0;
  let busy = 0;
  // The counters are read when dnsperf exits, so parsing its output afterwards is not counted.
  const r = await runDnsperf({
    ...o,
    onExit: () => {
      seconds = (performance.now() - t0) / 1000;
      server = cpuSeconds(serverPid) - cpu0;
      upstream = upstreamPid ? cpuSeconds(upstreamPid) - up0 : 0;
      busy = machineBusySeconds() - busy0;
      logTo = traced ? sizeOf(traced.log) : 0;
      clearInterval(sampler);
    },
  }).finally(() => clearInterval(sampler));
  const gc = traced
    ? summarizePauses(gcPauses(traced.kind, readBetween(traced.log, logFrom, logTo)))
    : undefined;
  return {
    ...(gc ? { gc } : {}),
    ...r,
    seconds,
    serverCores: server / seconds,
    upstreamCores: upstream / seconds,
    otherCores: Math.max(0, (busy - server - upstream - r.clientCpu) / seconds),
    peakRssMiB: peakRssMiB(serverPid),
    peakPssMiB: Math.max(peakPss, pssMiB(serverPid)),
  };
}
