// The eBPF data plane: renderEBPF plus a BPFMapStore (the kernel's pinned maps, or the fake). The programs are
// loaded and attached once, before the first sync (the app's job); a sync only writes map entries. After a sync,
// the connected UDP sockets still sent along flows it removed are ended through a SocketEnder (stale-flows.ts).

import { type MapName, maps as mapSpecs } from "../ebpf/layout.js";
import { type BPFMapStore, stepSize } from "../ebpf/map-store.js";
import { type EBPFOptions, type EBPFState, renderEBPF } from "../ebpf/render.js";
import type { SocketEnder, SocketEndResult } from "../ebpf/socket-ender.js";
import { flowName, staleFlows } from "../ebpf/stale-flows.js";
import type { ProxyMetrics } from "../metrics/metrics.js";
import type {
  BackendSyncInput,
  BackendSyncResult,
  ProgrammedMaps,
  ProxierLogger,
  ProxyBackend,
} from "./backend.js";
import { silentLogger } from "./backend.js";

export interface EBPFProxyBackendOptions {
  readonly options: EBPFOptions;
  readonly maps: BPFMapStore;
  readonly metrics?: ProxyMetrics;
  readonly logger?: ProxierLogger;
  /** Ends the sockets of stale flows (apply/bpf-destroy.ts); unset, none are ended. */
  readonly sockets?: SocketEnder;
}

/** The maps the proxy writes; the programs own the others (reverse_sk, affinity). */
const PROXY_MAPS = ["services", "backends", "revNat", "sourceRange"] as const satisfies readonly MapName[];

export class EBPFProxyBackend implements ProxyBackend {
  readonly mode = "ebpf" as const;
  readonly #o: EBPFProxyBackendOptions;
  #options: EBPFOptions;
  #state: EBPFState | undefined;

  constructor(options: EBPFProxyBackendOptions) {
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
    // Until this sync has succeeded, what the maps hold is unknown.
    this.#state = undefined;
    const existing = previous === undefined ? await this.#liveEntries() : undefined;
    const r = renderEBPF(this.#options, { ...input, ...(existing ? { existing } : {}) }, previous);
    const family = this.#options.family;
    const started = performance.now();
    try {
      await this.#o.maps.write(family, r.steps);
    } catch (err) {
      this.#o.metrics?.bpfSyncFailuresTotal?.inc({ ip_family: family });
      throw err;
    }
    this.#record(r.steps, r.sizes);
    (this.#o.logger ?? silentLogger).v?.(2).info("BPF maps written", {
      ipFamily: family,
      steps: r.steps.length,
      fullSync: r.fullSync,
      elapsedMs: Number((performance.now() - started).toFixed(3)),
    });
    this.#state = r.state;
    return { fullSync: r.fullSync, noLocalEndpoints: r.noLocalEndpoints };
  }

  /**
   * Ends the connected UDP sockets the programs sent to a backend that no longer serves the frontend they asked
   * for, as kube-proxy deletes such flows' conntrack entries. Failures of single namespaces are logged; a
   * rejection of the whole run is the Proxier's to log.
   */
  async endStaleFlows(before: ProgrammedMaps, after: ProgrammedMaps): Promise<void> {
    const sockets = this.#o.sockets;
    if (!sockets) return;
    const flows = staleFlows(this.#options.nodePortIPs, before, after);
    if (flows.length === 0) return;
    const family = this.#options.family;
    const started = performance.now();
    const r = await sockets.end(family, flows);
    this.#o.metrics?.bpfSocketsDestroyedTotal?.inc({ ip_family: family }, r.ended);
    this.#logEnded(flows.length, r, performance.now() - started);
  }

  #logEnded(flows: number, r: SocketEndResult, elapsedMs: number): void {
    const log = this.#o.logger ?? silentLogger;
    const ipFamily = this.#options.family;
    for (const error of r.errors)
      log.warn("ending stale UDP sockets in a namespace failed", { ipFamily, error });
    const fields = {
      ipFamily,
      flows,
      ended: r.ended,
      endedOn: r.endedByFlow.map((f) => `${flowName(f.flow)} (${f.ended})`),
      namespaces: r.namespaces,
      elapsedMs: Number(elapsedMs.toFixed(3)),
    };
    // What this run did to the sockets, to put beside an application's ECONNABORTED.
    if (r.ended > 0) log.info("stale UDP sockets ended", fields);
    else log.v?.(2).info("no stale UDP sockets to end", fields);
  }

  /**
   * What the maps hold now, so a first sync (or one after a failure) keeps what an earlier run wrote and still
   * holds, and deletes the rest.
   */
  async #liveEntries(): Promise<Partial<Record<MapName, Array<[Buffer, Buffer]>>>> {
    const out: Partial<Record<MapName, Array<[Buffer, Buffer]>>> = {};
    for (const map of PROXY_MAPS) out[map] = await this.#o.maps.dump(this.#options.family, map);
    return out;
  }

  #record(
    steps: ReturnType<typeof renderEBPF>["steps"],
    sizes: Record<(typeof PROXY_MAPS)[number], number>,
  ): void {
    const m = this.#o.metrics;
    if (!m) return;
    const ip_family = this.#options.family;
    const written: Record<string, number> = { services: 0, backends: 0, revNat: 0, sourceRange: 0 };
    for (const s of steps) written[s.map] = (written[s.map] ?? 0) + stepSize(s);
    for (const map of PROXY_MAPS) {
      // The kernel's name without the family prefix, which ip_family gives: services, backends, reverse_nat.
      const labels = { ip_family, map: mapSpecs[map].name };
      m.bpfMapEntries?.set(labels, sizes[map]);
      m.bpfMapEntriesLastSync?.set(labels, written[map] ?? 0);
    }
  }
}
