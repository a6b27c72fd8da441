// The IPVS data plane: renderIPVS plus an IPVSApplier (ipvsadm, ipset, ip) and an
// IptablesRestoreApplier. IPVS has no partial rendering; what differs is how much is trusted.
// A partial sync applies diffs against the state the last sync left. A full sync (the
// first, the periodic one, and every sync after a failure) trusts nothing: it reads the
// IPVS table and kube-ipvs0's addresses back from the kernel, ensures the skeleton, and
// rewrites every ipset in full.

import type { IptablesRestoreApplier } from "../apply/iptables-restore.js";
import type { IPVSApplier } from "../apply/ipvs-applier.js";
import type { IPVSOptions } from "../ipvs/options.js";
import { type IPVSState, renderIPVS } from "../ipvs/render.js";
import { ensureIPVSJumpChains } from "../ipvs/skeleton.js";
import type { ProxyMetrics } from "../metrics/metrics.js";
import type { BackendSyncInput, BackendSyncResult, ProxierLogger, ProxyBackend } from "./backend.js";
import { silentLogger } from "./backend.js";
import { runSkeleton } from "./run-skeleton.js";

export interface IPVSProxyBackendOptions {
  readonly options: IPVSOptions;
  readonly ipvs: IPVSApplier;
  /** The applier for this backend's family. */
  readonly ipt: IptablesRestoreApplier;
  readonly metrics?: ProxyMetrics;
  readonly logger?: ProxierLogger;
}

export class IPVSProxyBackend implements ProxyBackend {
  readonly mode = "ipvs" as const;
  readonly #o: IPVSProxyBackendOptions;
  #options: IPVSOptions;
  #state: IPVSState | undefined;

  constructor(options: IPVSProxyBackendOptions) {
    this.#o = options;
    this.#options = options.options;
  }

  get family() {
    return this.#options.family;
  }

  setNodeLabels(labels: Readonly<Record<string, string>>): void {
    this.#options = { ...this.#options, nodeLabels: labels };
  }

  async sync(input: BackendSyncInput): Promise<BackendSyncResult> {
    const previous = this.#state;
    // Until this sync has succeeded, what the kernel holds is unknown.
    this.#state = undefined;
    const full = previous === undefined || input.changedServices === undefined;
    const { ipvs, ipt, metrics } = this.#o;
    const labels = { ip_family: this.#options.family };

    // Every sync reads the table: connection counts decide which removed real servers
    // drain at weight 0 and which drained ones can go now.
    const kernel = await ipvs.list();
    let before: IPVSState;
    if (full) {
      await ipvs.ensureDummy();
      before = {
        table: kernel.table,
        // Unknown, so the full ipset program below rewrites every set.
        ipsets: new Map(),
        bound: new Set(await ipvs.boundAddresses()),
      };
    } else before = previous;

    const r = renderIPVS(this.#options, { ...input, busyRealServers: kernel.busy }, before);
    // The order matters: the iptables rules match the sets, and a VIP is bound before its
    // virtual server exists so the first packet to it is already accepted locally.
    await ipvs.restoreIPSets(full ? r.ipsetFull : r.ipsetDiff);
    try {
      if (full) await runSkeleton(ipt, ensureIPVSJumpChains);
      await ipt.restore(r.iptablesRestore, { noflush: true, counters: true });
    } catch (err) {
      metrics?.iptablesRestoreFailuresTotal?.inc(labels);
      throw err;
    }
    for (const ip of r.bind.add) await ipvs.bind(ip);
    await ipvs.restore(r.ipvsadmDiff);
    // Last, so a VIP keeps answering until its virtual server is gone.
    let unbound = true;
    for (const ip of r.bind.remove) {
      try {
        await ipvs.unbind(ip);
      } catch (err) {
        // A stale address only makes the node accept packets nobody serves: not worth failing
        // the sync, but forgetting the state makes the next sync full, which retries it.
        unbound = false;
        (this.#o.logger ?? silentLogger).warn("removing a VIP from kube-ipvs0 failed", { ip, error: err });
      }
    }
    if (unbound) this.#state = r.state;
    return { fullSync: full, noLocalEndpoints: r.noLocalEndpoints };
  }
}
