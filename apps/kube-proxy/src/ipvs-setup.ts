// What IPVS mode needs from the node before its first sync, as upstream's NewProxier does it:
// IPVS itself (modern kube-proxy exits when it is missing instead of falling back to
// iptables), its sysctls, and the connection timeouts.
import {
  type Exec,
  IPVSApplier,
  IPVSUnavailableError,
  ipvsSysctls,
  type ProxierLogger,
} from "@switchyard/proxier";
import type { ResolvedOptions } from "./config/config.js";

/** The one-line start-up error; main prints it and exits 1. */
export class IPVSStartError extends Error {
  override name = "IPVSStartError";
}

export interface IPVSSetupContext {
  readonly exec: Exec;
  readonly logger: ProxierLogger;
  /** Host path check; tests pretend /proc/net/ip_vs exists. */
  readonly exists?: (path: string) => boolean;
}

export async function prepareIPVS(o: ResolvedOptions, ctx: IPVSSetupContext): Promise<void> {
  const ipvs = new IPVSApplier({ exec: ctx.exec, exists: ctx.exists });
  try {
    await ipvs.checkAvailable();
  } catch (err) {
    // Upstream's words: "can't use the IPVS proxier: <why>".
    if (err instanceof IPVSUnavailableError)
      throw new IPVSStartError(`can't use the IPVS proxier: ${err.message}`);
    throw new IPVSStartError(`can't use the IPVS proxier: ${(err as Error).message}`);
  }
  ctx.logger.warn("the ipvs proxy mode is deprecated upstream (KEP-5495); consider nftables", {});
  for (const s of ipvsSysctls(o.ipvs.strictARP)) {
    try {
      await ipvs.sysctl(s.key, s.value);
    } catch (err) {
      // Upstream fails start-up here too: without them IPVS mode misroutes traffic.
      throw new IPVSStartError(
        `can't set sysctl ${s.key}=${s.value} (${s.reason}): ${(err as Error).message}`,
      );
    }
  }
  const seconds = (msValue: number) => Math.round(msValue / 1000);
  const { tcpTimeoutMs, tcpFinTimeoutMs, udpTimeoutMs } = o.ipvs;
  try {
    await ipvs.setTimeouts(seconds(tcpTimeoutMs), seconds(tcpFinTimeoutMs), seconds(udpTimeoutMs));
  } catch (err) {
    // Upstream only logs this one.
    ctx.logger.error("setting IPVS timeouts failed", { error: err });
  }
}
