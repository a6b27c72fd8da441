// What IPVS mode needs from the node before its first sync, as upstream does it: IPVS itself
// (modern kube-proxy exits when it is missing instead of falling back to iptables), checked
// first, and the connection timeouts, set after the sysctls (./ipvs-settings.ts).
import { type Exec, IPVSApplier, IPVSUnavailableError, type ProxierLogger } from "@switchyard/proxier";
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

export async function prepareIPVS(ctx: IPVSSetupContext): Promise<void> {
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
}

/**
 * ipvsadm --set, after the sysctls as in upstream's NewProxier; all three zero keeps the
 * kernel's timeouts. A failure is only logged, in upstream's words.
 */
export async function configureIPVSTimeouts(o: ResolvedOptions, ctx: IPVSSetupContext): Promise<void> {
  const ipvs = new IPVSApplier({ exec: ctx.exec, exists: ctx.exists });
  const seconds = (msValue: number) => Math.round(msValue / 1000);
  const { tcpTimeoutMs, tcpFinTimeoutMs, udpTimeoutMs } = o.ipvs;
  try {
    await ipvs.setTimeouts(seconds(tcpTimeoutMs), seconds(tcpFinTimeoutMs), seconds(udpTimeoutMs));
  } catch (err) {
    ctx.logger.error("Failed to configure IPVS timeouts", { err });
  }
}
