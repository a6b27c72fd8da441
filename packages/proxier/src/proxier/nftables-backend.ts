// The nftables data plane: renderNFTables plus an NFTRunner (the netlink writer, the real `nft` or
// the fake).
import type { NFTRunner } from "../apply/nft-applier.js";
import type { ProxyMetrics } from "../metrics/metrics.js";
import type { NFTFamily } from "../nftables/objects.js";
import { ipX, type NFTablesOptions } from "../nftables/options.js";
import { type NFTablesState, renderNFTables } from "../nftables/render.js";
import type { BackendSyncInput, BackendSyncResult, ProxierLogger, ProxyBackend } from "./backend.js";
import { silentLogger } from "./backend.js";

export interface NFTablesProxyBackendOptions {
  readonly options: NFTablesOptions;
  /** Runs transactions; `listObjects` (NftApplier has it) lets a first sync clean up an earlier run. */
  readonly nft: NFTRunner & {
    listObjects?(family: NFTFamily, table: string): Promise<{ chains: string[]; sets: string[] }>;
    /** NetlinkNftApplier says which writer the last transaction went through. */
    readonly lastWriter?: string | undefined;
  };
  readonly metrics?: ProxyMetrics;
  readonly logger?: ProxierLogger;
}

export class NFTablesProxyBackend implements ProxyBackend {
  readonly mode = "nftables" as const;
  readonly #o: NFTablesProxyBackendOptions;
  #options: NFTablesOptions;
  #state: NFTablesState | undefined;

  constructor(options: NFTablesProxyBackendOptions) {
    this.#o = options;
    this.#options = options.options;
  }

  get family() {
    return this.#options.family;
  }

  setNodeLabels(labels: Readonly<Record<string, string>>): void {
    this.#options = { ...this.#options, nodeLabels: labels };
  }

  /** The drop rule for unallocated ClusterIPs is part of the skeleton, written on full syncs. */
  setServiceCIDRs(cidrs: readonly string[]): boolean {
    const before = this.#options.serviceCIDRs ?? [];
    if (before.length === cidrs.length && before.every((c, i) => c === cidrs[i])) return false;
    this.#options = { ...this.#options, serviceCIDRs: [...cidrs] };
    return true;
  }

  async sync(input: BackendSyncInput): Promise<BackendSyncResult> {
    const previous = this.#state;
    // Until this sync has succeeded, what the kernel holds is unknown.
    this.#state = undefined;
    const existing =
      previous === undefined ? await this.#o.nft.listObjects?.(ipX(this.#options), "kube-proxy") : undefined;
    const r = renderNFTables(this.#options, { ...input, existing }, previous);
    const labels = { ip_family: this.#options.family };
    let cleanupFailed = false;
    if (r.cleanup) {
      try {
        await this.#o.nft.run(r.cleanup);
      } catch (err) {
        // Stale chains only cost memory; they are found again by the next full sync.
        cleanupFailed = true;
        this.#o.metrics?.nftablesCleanupFailuresTotal?.inc(labels);
        (this.#o.logger ?? silentLogger).warn("deleting stale nftables chains failed", { error: err });
      }
    }
    const started = performance.now();
    const cpu = process.cpuUsage();
    try {
      await this.#o.nft.run(r.transaction);
    } catch (err) {
      this.#o.metrics?.nftablesSyncFailuresTotal?.inc(labels);
      throw err;
    }
    // What the write cost apart from the render, at upstream's per-sync verbosity (the benchmark reads it).
    (this.#o.logger ?? silentLogger).v?.(2).info("nftables transaction written", {
      ipFamily: this.#options.family,
      writer: this.#o.nft.lastWriter ?? "nft",
      operations: r.transaction.size,
      fullSync: r.fullSync,
      elapsedMs: Number((performance.now() - started).toFixed(3)),
      // the process's system time meanwhile: the kernel's handling of a netlink batch (nft's is its own)
      systemMs: Number((process.cpuUsage(cpu).system / 1000).toFixed(3)),
    });
    if (!cleanupFailed) this.#state = r.state;
    return { fullSync: r.fullSync, noLocalEndpoints: r.noLocalEndpoints };
  }
}
