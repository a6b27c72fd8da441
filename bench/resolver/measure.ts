// One measured dnsperf run against a running server: the client's numbers plus what the server (and the
// upstream, and everything else on the machine) spent meanwhile.
import { type DnsperfOptions, type DnsperfResult, runDnsperf } from "./dnsperf.js";
import { cpuSeconds, machineBusySeconds, peakRssMiB } from "./servers.js";

export interface Measured extends DnsperfResult {
  seconds: number;
  /** Server CPU, in cores (user+sys seconds / wall seconds). */
  serverCores: number;
  upstreamCores: number;
  /** Every other process on the machine, in cores: machine busy minus server, upstream and dnsperf. */
  otherCores: number;
  peakRssMiB: number;
}

export async function measure(
  serverPid: number,
  upstreamPid: number | undefined,
  o: DnsperfOptions,
): Promise<Measured> {
  const cpu0 = cpuSeconds(serverPid);
  const up0 = upstreamPid ? cpuSeconds(upstreamPid) : 0;
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
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
    },
  });
  return {
    ...r,
    seconds,
    serverCores: server / seconds,
    upstreamCores: upstream / seconds,
    otherCores: Math.max(0, (busy - server - upstream - r.clientCpu) / seconds),
    peakRssMiB: peakRssMiB(serverPid),
  };
}
