// The start-up steps up to the first sync, shared by a normal start and --init-only: upstream's
// newProxyServer runs the same ones with initOnly set (cleanup of other modes, the client, the
// Node, the conntrack sysctls, then each proxier's constructor up to its sysctls and IPVS
// timeouts) and only then returns, so --init-only reads the Node from the API server too.
import { hostname } from "node:os";
import { clusterAccess, HttpRestClient, type Logger } from "@switchyard/kube";
import { type Exec, type IPFamily, platformCleanup, realExec, type SettingFiles } from "@switchyard/proxier";
import type { ResolvedOptions } from "./config/config.js";
import { cleanupTargets } from "./dataplane.js";
import { withInjectedFaults } from "./faults.js";
import { configureIPVSTimeouts, prepareIPVS } from "./ipvs-setup.js";
import { proxyFamilies } from "./network.js";
import { fetchNode, type NodeInfo } from "./node-info.js";
import { applyStartupSettings, type NodeSettingsResult } from "./node-settings.js";

export interface InitOptions {
  readonly logger: Logger;
  readonly exec?: Exec;
  /** --master: replaces the kubeconfig's server (@switchyard/kube clusterAccess); "" or unset for none. */
  readonly master?: string;
  /** How long to wait for the Node object at start-up. */
  readonly nodeWaitMs?: number;
  /** Host path check for /proc/net/ip_vs; tests pretend IPVS exists. */
  readonly exists?: (path: string) => boolean;
  /** /proc/sys and /sys/module access for the start-up sysctls; the real files when unset. */
  readonly settingFiles?: SettingFiles;
  /** CPUs for conntrack.maxPerCore; os.cpus() when unset. */
  readonly numCPU?: number;
  /**
   * Remove the other modes' rules here, before the first sync, as upstream does (--init-only, and a start with
   * SWITCHYARD_PROXY_CLEANUP=before-first-sync). A normal start removes them after its first sync instead
   * (app.ts), so a mode switch never leaves the node without Service rules.
   */
  readonly cleanupBeforeFirstSync?: boolean;
}

/** What the initialization learnt, for the proxiers that a normal start builds next. */
export interface NodeInit {
  readonly exec: Exec;
  readonly nodeName: string;
  readonly client: HttpRestClient;
  readonly info: NodeInfo;
  readonly families: IPFamily[];
  readonly nodeIPs: Record<IPFamily, string>;
  readonly kernel: NodeSettingsResult;
}

/** The other modes' rules go; a failure is logged, never fatal (upstream's order and tolerance). */
export async function removeOtherModes(
  exec: Exec,
  mode: ResolvedOptions["mode"],
  logger: Logger,
  bpfRoot = "",
): Promise<void> {
  try {
    await platformCleanup(cleanupTargets(exec, bpfRoot), mode);
  } catch (err) {
    logger.error("removing other proxy modes' rules failed; continuing", { error: err });
  }
}

export function nodeNameOf(o: ResolvedOptions): string {
  return (o.hostnameOverride || hostname()).trim().toLowerCase();
}

export async function initializeNode(o: ResolvedOptions, opts: InitOptions): Promise<NodeInit> {
  const { logger } = opts;
  const exec = withInjectedFaults(opts.exec ?? realExec);
  // Before anything else, so a node without IPVS fails fast with one line and changes nothing.
  if (o.mode === "ipvs") await prepareIPVS({ exec, logger, exists: opts.exists });
  const nodeName = nodeNameOf(o);
  // This is what makes a mode switch a plain restart: the other modes' rules go, here or after the first sync.
  if (opts.cleanupBeforeFirstSync) await removeOtherModes(exec, o.mode, logger, o.ebpf.bpfRoot);
  const client = new HttpRestClient(clusterAccess(o.kubeconfig, opts.master ?? ""), {
    userAgent: "switchyard-proxy",
  });
  const info = await fetchNode(client, nodeName, logger, opts.nodeWaitMs);
  const { families, nodeIPs } = proxyFamilies(o, info.ips);
  const kernel = await applyStartupSettings(o, families, nodeIPs, {
    logger,
    files: opts.settingFiles,
    numCPU: opts.numCPU,
  });
  if (o.mode === "ipvs") await configureIPVSTimeouts(o, { exec, logger, exists: opts.exists });
  return { exec, nodeName, client, info, families, nodeIPs, kernel };
}
