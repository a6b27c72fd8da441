// The iptables data plane: renderIPTables plus one IptablesRestoreApplier (one family, one
// backend binary). Full syncs first ensure the jump rules from the built-in chains, as
// kube-proxy does with single iptables calls, and the nfacct counters its rules name; the rest is one
// iptables-restore.
import type { IptablesRestoreApplier } from "../apply/iptables-restore.js";
import type { IPTablesOptions } from "../iptables/options.js";
import { type IPTablesState, renderIPTables } from "../iptables/render.js";
import { skeletonRestore } from "../iptables/skeleton-restore.js";
import type { ProxyMetrics } from "../metrics/metrics.js";
import { CT_STATE_INVALID_NFACCT, LOCALHOST_NODEPORTS_NFACCT } from "../metrics/nfacct-metrics.js";
import type { Nfacct } from "../nfacct/nfacct.js";
import type { BackendSyncInput, BackendSyncResult, ProxierLogger, ProxyBackend } from "./backend.js";

export interface IPTablesProxyBackendOptions {
  readonly options: IPTablesOptions;
  readonly ipt: IptablesRestoreApplier;
  readonly metrics?: ProxyMetrics;
  /** The kernel's accounting objects; absent when they are not available, and then no rule names one. */
  readonly nfacct?: Nfacct;
  readonly logger?: ProxierLogger;
}

type NfacctCounters = NonNullable<IPTablesOptions["nfacctCounters"]>;

/**
 * As upstream's full sync: each counter is ensured, and the rules name only those that exist, so a kernel that
 * refuses one still gets every rule, uncounted.
 */
export async function ensureNfacctCounters(nfacct: Nfacct, logger?: ProxierLogger): Promise<NfacctCounters> {
  const ensured = async (name: string) => {
    try {
      await nfacct.ensure(name);
      return true;
    } catch (err) {
      logger?.error("Failed to create nfacct counter; the corresponding metric will not be updated", {
        err: (err as Error).message,
        counter: name,
      });
      return false;
    }
  };
  return {
    ctStateInvalidDropped: await ensured(CT_STATE_INVALID_NFACCT),
    localhostNodePortsAccepted: await ensured(LOCALHOST_NODEPORTS_NFACCT),
  };
}

/** Chain names declared in iptables-save output (":NAME POLICY [counters]"). */
export function savedChainNames(save: string): string[] {
  const out: string[] = [];
  for (const line of save.split("\n")) {
    const m = /^:(\S+) /.exec(line);
    if (m?.[1]) out.push(m[1]);
  }
  return out;
}

/**
 * Ensures the jump rules and canary chains with one iptables-save per table and, when something
 * is missing, one restore (see skeleton-restore.ts); returns the nat table as it was saved.
 */
export async function ensureIPTablesSkeleton(ipt: IptablesRestoreApplier): Promise<string> {
  const saved = {
    filter: await ipt.save("filter"),
    nat: await ipt.save("nat"),
    mangle: await ipt.save("mangle"),
  };
  const missing = skeletonRestore(saved);
  if (missing !== "") await ipt.restore(missing, { noflush: true });
  return saved.nat;
}

export class IPTablesProxyBackend implements ProxyBackend {
  readonly mode = "iptables" as const;
  readonly #o: IPTablesProxyBackendOptions;
  #options: IPTablesOptions;
  #state: IPTablesState | undefined;

  constructor(options: IPTablesProxyBackendOptions) {
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
    this.#state = undefined;
    const full = previous === undefined || input.changedServices === undefined;
    const labels = { ip_family: this.#options.family };
    let existingNATChains: string[] | undefined;
    try {
      if (full) {
        const nat = await ensureIPTablesSkeleton(this.#o.ipt);
        if (previous === undefined) existingNATChains = savedChainNames(nat);
        if (this.#o.nfacct) {
          const nfacctCounters = await ensureNfacctCounters(this.#o.nfacct, this.#o.logger);
          this.#options = { ...this.#options, nfacctCounters };
        }
      }
    } catch (err) {
      this.#o.metrics?.iptablesRestoreFailuresTotal?.inc(labels);
      throw err;
    }
    const r = renderIPTables(this.#options, { ...input, existingNATChains }, previous);
    try {
      await this.#o.ipt.restore(r.restoreChunks, { noflush: true, counters: true });
    } catch (err) {
      this.#o.metrics?.iptablesRestoreFailuresTotal?.inc(labels);
      if (!r.fullSync) this.#o.metrics?.iptablesPartialRestoreFailuresTotal?.inc(labels);
      throw err;
    }
    this.#state = r.state;
    for (const table of ["filter", "nat"] as const) {
      this.#o.metrics?.iptablesRulesLastSync?.set({ ...labels, table }, r.rulesWritten[table]);
      // A full sync writes every rule we own, so it is also the total.
      if (r.fullSync) this.#o.metrics?.iptablesRulesTotal?.set({ ...labels, table }, r.rulesWritten[table]);
    }
    return { fullSync: r.fullSync, noLocalEndpoints: r.noLocalEndpoints };
  }
}
