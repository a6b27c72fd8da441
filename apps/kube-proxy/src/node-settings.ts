// The kernel settings kube-proxy makes before its first sync, applied through injected file
// access: the conntrack section (every mode; cmd/kube-proxy platformSetup), in IPVS mode its
// own sysctls (./ipvs-settings.ts), and in iptables mode route_localnet for localhost
// NodePorts (the IPv4 proxier's constructor). Upstream stops start-up when one of them
// cannot be written, and so do we, with its words.
import { cpus } from "node:os";
import {
  applyNodeSettings,
  conntrackSettings,
  type IPFamily,
  localhostNodePortSettings,
  localhostNodePortsEnabled,
  NodeSettingError,
  type ProxierLogger,
  procFiles,
  ROUTE_LOCALNET_MESSAGE,
  readNodeSetting,
  type SettingFiles,
  TCP_BE_LIBERAL,
} from "@switchyard/proxier";
import type { ResolvedOptions } from "./config/config.js";
import { applyIPVSSettings } from "./ipvs-settings.js";
import { nodePortAddresses } from "./network.js";

/** The one-line start-up error; main prints it and exits 1. */
export class NodeSettingsError extends Error {
  override name = "NodeSettingsError";
}

export interface NodeSettingsContext {
  readonly logger: ProxierLogger;
  /** /proc/sys and /sys/module access; the real files when unset. */
  readonly files?: SettingFiles;
  /** Online CPUs; os.cpus() when unset. */
  readonly numCPU?: number;
}

export interface NodeSettingsResult {
  /** nf_conntrack_tcp_be_liberal as the kernel now has it: iptables mode then drops no INVALID packets. */
  readonly tcpBeLiberal: boolean;
}

/** Whether the IPv4 iptables proxier will serve NodePorts on 127.0.0.1 (and so needs route_localnet). */
export function needsRouteLocalnet(
  o: ResolvedOptions,
  families: readonly IPFamily[],
  nodeIPs: Record<IPFamily, string>,
): boolean {
  if (o.mode !== "iptables" || !families.includes("IPv4")) return false;
  // The renderer's own test, so that the sysctl and the rules never disagree; it reads only
  // these three fields of the iptables options.
  const options = {
    family: "IPv4",
    localhostNodePorts: o.localhostNodePorts,
    nodePortAddresses: nodePortAddresses(o, o.mode, "IPv4", nodeIPs.IPv4),
  } as const;
  return localhostNodePortsEnabled(options as Parameters<typeof localhostNodePortsEnabled>[0]);
}

export async function applyStartupSettings(
  o: ResolvedOptions,
  families: readonly IPFamily[],
  nodeIPs: Record<IPFamily, string>,
  ctx: NodeSettingsContext,
): Promise<NodeSettingsResult> {
  const files = ctx.files ?? procFiles();
  const log = ctx.logger;
  const changed = (c: { key: string; before: number | undefined; after: number }) =>
    log.info("set sysctl", { entry: c.key, before: c.before, value: c.after });
  try {
    await applyNodeSettings(files, conntrackSettings(o.conntrack, ctx.numCPU ?? cpus().length), changed);
  } catch (err) {
    if (!(err instanceof NodeSettingError)) throw err;
    throw new NodeSettingsError(
      `could not set conntrack parameters from kube-proxy configuration: ${err.message}`,
    );
  }
  // IPVS mode's own sysctls, after the conntrack ones as upstream's proxier constructor runs after platformSetup.
  if (o.mode === "ipvs") await applyIPVSSettings(o, families, files, log);
  if (needsRouteLocalnet(o, families, nodeIPs)) {
    log.info(ROUTE_LOCALNET_MESSAGE, { ipFamily: "IPv4" });
    try {
      await applyNodeSettings(files, localhostNodePortSettings(true), changed);
    } catch (err) {
      if (!(err instanceof NodeSettingError)) throw err;
      throw new NodeSettingsError(`unable to create proxier: ${err.message}`);
    }
  }
  const tcpBeLiberal = ((await readNodeSetting(files, TCP_BE_LIBERAL)) ?? 0) !== 0;
  if (tcpBeLiberal && o.mode === "iptables") {
    log.info("nf_conntrack_tcp_be_liberal set, not installing DROP rules for INVALID packets", {});
  }
  return { tcpBeLiberal };
}
