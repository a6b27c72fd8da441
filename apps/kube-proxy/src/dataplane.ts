// Which kernel interfaces a mode writes through, built once from the options: the renderer
// options and backend per family, and the cleanup targets that cover every mode's leftovers.
import {
  type BPFMapName,
  type BPFMapStore,
  type CleanupTargets,
  DEFAULT_PIN_ROOT,
  detectIPTablesBackend,
  EBPFProxyBackend,
  type Exec,
  type IPFamily,
  type IPTablesBackend,
  IPTablesProxyBackend,
  IPVSApplier,
  IPVSProxyBackend,
  IptablesRestoreApplier,
  isRealExec,
  KernelBPFMapStore,
  KernelSocketEnder,
  loadSockPrograms,
  loadTcPrograms,
  NFTablesProxyBackend,
  type Nfacct,
  NfacctCLI,
  NftApplier,
  newNftRunner,
  nftWriterFromEnv,
  type ProxierLogger,
  type ProxyBackend,
  type ProxyMetrics,
  removeSockPrograms,
  removeTcPrograms,
  type SocketEnder,
} from "@switchyard/proxier";
import type { Node } from "kubernetes-types/core/v1.js";
import type { ResolvedOptions } from "./config/config.js";
import { devicesHolding, localDetector, nodeAddresses, nodePortAddresses } from "./network.js";

/** Every iptables binary set that may hold rules of ours: both families, both backends. */
export function allIPTables(exec: Exec): IptablesRestoreApplier[] {
  const out: IptablesRestoreApplier[] = [];
  for (const backend of ["legacy", "nft"] as const) {
    for (const family of ["IPv4", "IPv6"] as const)
      out.push(new IptablesRestoreApplier({ family, backend, exec }));
  }
  return out;
}

/**
 * `bpfRoot`: where ebpf mode pins its programs' links and maps ("" for the default). They are removed only with
 * the real exec: a test's fake kernel must not unpin a proxy this machine is running.
 */
export function cleanupTargets(exec: Exec, bpfRoot = ""): CleanupTargets {
  return {
    nft: new NftApplier({ exec }),
    iptables: allIPTables(exec),
    ipvs: new IPVSApplier({ exec }),
    ...(isRealExec(exec)
      ? {
          ebpf: {
            // The tc links and the NAT hooks' nft table first; then the socket programs' links and the maps.
            async remove() {
              await removeTcPrograms(pinRootOf(bpfRoot), exec);
              await removeSockPrograms(pinRootOf(bpfRoot));
            },
          },
        }
      : {}),
  };
}

const pinRootOf = (bpfRoot: string) => (bpfRoot === "" ? DEFAULT_PIN_ROOT : bpfRoot);

/**
 * ebpf mode's programs, loaded once for every family before the first sync: attached to the cgroup (the
 * cgroup2 mount's root unless --cgroup-root), links and maps pinned under --bpf-root; the maps' store, and the
 * socket-destroy iterator that ends stale UDP flows' sockets (none where the kernel cannot: logged, not fatal).
 */
export async function openEBPF(
  o: ResolvedOptions,
  families: readonly IPFamily[],
  nodeIPs: Readonly<Record<IPFamily, string>>,
  exec: Exec,
  logger: ProxierLogger,
): Promise<{ maps: BPFMapStore; sockets?: SocketEnder }> {
  const pinRoot = pinRootOf(o.ebpf.bpfRoot);
  // As Cilium's --bpf-lb-map-max: the size of every load-balancing map (its per-map flags inherit it).
  const max = o.ebpf.lbMapMax;
  const lbMaps = { services: max, backends: max, revNat: max, affinity: max, sourceRange: max };
  const loaded = await loadSockPrograms({
    pinRoot,
    families,
    maxEntries: lbMaps,
    ...(o.ebpf.cgroupRoot !== "" ? { cgroupPath: o.ebpf.cgroupRoot } : {}),
  });
  logger.info("BPF programs attached", {
    cgroup: loaded.cgroupPath,
    pinRoot: loaded.pinRoot,
    programs: loaded.programs,
    ...(loaded.recreatedMaps.length > 0 ? { recreatedMaps: loaded.recreatedMaps } : {}),
    elapsedMs: Math.round(loaded.elapsedMs),
  });
  await attachTc(o, pinRoot, families, nodeIPs, exec, logger, lbMaps);
  const maps = await KernelBPFMapStore.open(pinRoot);
  try {
    const sockets = await KernelSocketEnder.open({ pinRoot, families, cgroupPath: loaded.cgroupPath });
    return { maps, sockets };
  } catch (err) {
    // bpf_sock_destroy came with Linux 6.5: older kernels keep the balancing, without ending stale UDP sockets.
    logger.warn("stale UDP sockets will not be ended: the socket-destroy iterator did not load", {
      err: (err as Error).message,
    });
    return { maps };
  }
}

/**
 * The tc programs for traffic from outside the node, on --devices (by default the interfaces holding the node's
 * IPs), masquerading to the node's IP of each family; the XDP program ahead of them per --bpf-lb-acceleration.
 */
async function attachTc(
  o: ResolvedOptions,
  pinRoot: string,
  families: readonly IPFamily[],
  nodeIPs: Readonly<Record<IPFamily, string>>,
  exec: Exec,
  logger: ProxierLogger,
  maxEntries: Partial<Record<BPFMapName, number>>,
): Promise<void> {
  const ips = families.map((f) => nodeIPs[f]);
  const devices = o.ebpf.devices.length > 0 ? o.ebpf.devices : devicesHolding(ips);
  if (devices.length === 0) {
    logger.warn("no device holds the node's IPs: traffic from outside the node is not balanced", {
      nodeIPs: ips,
    });
    return;
  }
  const masquerade = Object.fromEntries(families.map((f) => [f, nodeIPs[f]]));
  const acceleration = o.ebpf.lbAcceleration;
  const tc = await loadTcPrograms({ devices, masquerade, pinRoot, exec, maxEntries, acceleration });
  logger.info("BPF tc programs attached", {
    devices: tc.devices,
    ...(tc.detached.length > 0 ? { detached: tc.detached } : {}),
    ...(acceleration !== "disabled" ? { xdp: tc.xdp } : {}),
    ...(tc.xdpDetached.length > 0 ? { xdpDetached: tc.xdpDetached } : {}),
    elapsedMs: Math.round(tc.elapsedMs),
  });
}

export interface BackendContext {
  readonly options: ResolvedOptions;
  readonly nodeName: string;
  readonly node: Node | undefined;
  readonly nodeIPs: Record<IPFamily, string>;
  readonly exec: Exec;
  readonly metrics: ProxyMetrics;
  readonly logger: ProxierLogger;
  /** nf_conntrack_tcp_be_liberal as the kernel has it after start-up (upstream reads it back). */
  readonly tcpBeLiberal: boolean;
  /** iptables backend; detected like iptables-wrapper when unset. */
  readonly iptablesBackend?: IPTablesBackend;
  /** iptables mode's accounting objects (openNfacct); absent where the kernel has none. */
  readonly nfacct?: Nfacct;
  /** ebpf mode's maps (openEBPF). */
  readonly bpfMaps?: BPFMapStore;
  /** ebpf mode's socket-destroy iterator (openEBPF), where the kernel has it. */
  readonly bpfSockets?: SocketEnder;
}

/**
 * The kernel's nfacct, which iptables mode's rules count packets with, or undefined (logged as upstream's
 * iptables proxier logs it) when the node has no nfacct tool or the kernel no nfnetlink_acct.
 */
export async function openNfacct(exec: Exec, logger: ProxierLogger): Promise<Nfacct | undefined> {
  try {
    return await NfacctCLI.open(exec);
  } catch (err) {
    logger.error("Failed to create nfacct runner, nfacct based metrics won't be available", {
      err: (err as Error).message,
    });
    return undefined;
  }
}

export async function createBackend(ctx: BackendContext, family: IPFamily): Promise<ProxyBackend> {
  const o = ctx.options;
  const nodeIP = ctx.nodeIPs[family];
  const common = {
    family,
    nodeName: ctx.nodeName,
    nodeLabels: ctx.node?.metadata?.labels ?? {},
    nodeIP,
    nodePortAddresses: nodePortAddresses(o, o.mode, family, nodeIP),
    masqueradeBit: o.masqueradeBit,
    masqueradeAll: o.masqueradeAll,
  };
  const detector = localDetector(o, family, ctx.node);
  switch (o.mode) {
    case "nftables":
      return new NFTablesProxyBackend({
        options: { ...common, localDetector: detector },
        // The netlink writer unless SWITCHYARD_PROXY_NFT_WRITER=nft (or netlink cannot be opened here). It
        // does not go through the Exec seam, so an exec of a test's own (a fake, injected faults) keeps `nft`.
        nft: newNftRunner({
          exec: ctx.exec,
          writer: isRealExec(ctx.exec) ? nftWriterFromEnv() : "nft",
          logger: ctx.logger,
        }),
        metrics: ctx.metrics,
        logger: ctx.logger,
      });
    case "iptables": {
      const backend = ctx.iptablesBackend ?? (await detectIPTablesBackend(ctx.exec));
      return new IPTablesProxyBackend({
        options: {
          ...common,
          localDetector: detector,
          localhostNodePorts: o.localhostNodePorts,
          conntrackTCPLiberal: ctx.tcpBeLiberal,
          syncPeriodMs: o.syncPeriodMs,
        },
        ipt: new IptablesRestoreApplier({ family, backend, exec: ctx.exec }),
        metrics: ctx.metrics,
        logger: ctx.logger,
        ...(ctx.nfacct ? { nfacct: ctx.nfacct } : {}),
      });
    }
    case "ebpf": {
      if (!ctx.bpfMaps) throw new Error("ebpf mode: the BPF maps were not opened");
      const addresses = nodePortAddresses(o, o.mode, family, nodeIP);
      return new EBPFProxyBackend({
        options: {
          family,
          nodeName: ctx.nodeName,
          nodeLabels: common.nodeLabels,
          nodePortIPs: addresses === "all" ? nodeAddresses(family) : addresses,
          // loadBalancerSourceRanges holding the node's address let the node reach the VIPs (kube-proxy's rule).
          ...(nodeIP ? { nodeIP } : {}),
        },
        maps: ctx.bpfMaps,
        ...(ctx.bpfSockets ? { sockets: ctx.bpfSockets } : {}),
        metrics: ctx.metrics,
        logger: ctx.logger,
      });
    }
    case "ipvs": {
      const backend = ctx.iptablesBackend ?? (await detectIPTablesBackend(ctx.exec));
      return new IPVSProxyBackend({
        options: {
          ...common,
          nodeAddresses: nodeAddresses(family),
          scheduler: o.ipvs.scheduler,
          excludeCIDRs: o.ipvs.excludeCIDRs,
          localDetector: detector,
        },
        ipvs: new IPVSApplier({ exec: ctx.exec }),
        ipt: new IptablesRestoreApplier({ family, backend, exec: ctx.exec }),
        metrics: ctx.metrics,
        logger: ctx.logger,
      });
    }
  }
}
