import type { FinalizeResult, ReconcileMetrics } from "@switchyard/slice-controller";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

const SUBSYSTEM = "endpoint_slice_controller";
const MIRRORING = "endpoint_slice_mirroring_controller";
// Go's prometheus.ExponentialBuckets(2, 2, 15): 2, 4, ... 32768 endpoints.
const ENDPOINT_BUCKETS = Array.from({ length: 15 }, (_, i) => 2 * 2 ** i);

export type SyncResult = "success" | "stale" | "error";

type ServiceGauges = Pick<
  ReconcileMetrics,
  "endpointsDesired" | "numEndpointSlices" | "desiredEndpointSlices" | "fragmentationRatio"
>;

/**
 * The EndpointSlice controller's metrics under upstream's names. Gauges are sums over Services, so
 * each Service's last values are kept and replaced on every sync, as upstream's metrics cache does.
 */
export class ControllerMetrics {
  readonly #added: Histogram;
  readonly #removed: Histogram;
  readonly #endpointsDesired: Gauge;
  readonly #numSlices: Gauge;
  readonly #desiredSlices: Gauge;
  readonly #changes: Counter<"operation">;
  readonly #changedPerSync: Histogram<"topology" | "traffic_distribution">;
  readonly #syncs: Counter<"result">;
  readonly #byTrafficDistribution: Gauge<"traffic_distribution">;
  readonly #fragmentation: Gauge<"namespace" | "service">;
  readonly #services = new Map<string, ServiceGauges>();
  readonly #trafficDistribution = new Map<string, string>();

  constructor(registry: Registry) {
    const registers = [registry];
    const histogram = (name: string, help: string) =>
      new Histogram({ name: `${SUBSYSTEM}_${name}`, help, buckets: ENDPOINT_BUCKETS, registers });
    const gauge = (name: string, help: string) =>
      new Gauge({ name: `${SUBSYSTEM}_${name}`, help, registers });
    this.#added = histogram("endpoints_added_per_sync", "Number of endpoints added on each Service sync");
    this.#removed = histogram(
      "endpoints_removed_per_sync",
      "Number of endpoints removed on each Service sync",
    );
    this.#endpointsDesired = gauge("endpoints_desired", "Number of endpoints desired");
    this.#numSlices = gauge("num_endpoint_slices", "Number of EndpointSlices");
    this.#desiredSlices = gauge(
      "desired_endpoint_slices",
      "Number of EndpointSlices that would exist with perfect endpoint allocation",
    );
    this.#changes = new Counter({
      name: `${SUBSYSTEM}_changes`,
      help: "Number of EndpointSlice changes",
      labelNames: ["operation"],
      registers,
    });
    this.#changedPerSync = new Histogram({
      name: `${SUBSYSTEM}_endpointslices_changed_per_sync`,
      help: "Number of EndpointSlices changed on each Service sync",
      labelNames: ["topology", "traffic_distribution"],
      registers,
    });
    this.#syncs = new Counter({
      name: `${SUBSYSTEM}_syncs`,
      help: "Number of EndpointSlice syncs",
      labelNames: ["result"],
      registers,
    });
    this.#byTrafficDistribution = new Gauge({
      name: `${SUBSYSTEM}_services_count_by_traffic_distribution`,
      help: "Number of Services using some specific trafficDistribution",
      labelNames: ["traffic_distribution"],
      registers,
    });
    this.#fragmentation = new Gauge({
      name: "switchyard_endpointslice_fragmentation_ratio",
      help: "EndpointSlices of a Service divided by the number perfect packing would need (1 is ideal)",
      labelNames: ["namespace", "service"],
      registers,
    });
  }

  /** One reconcile of `serviceKey`, after its writes succeeded. */
  observeSync(serviceKey: string, m: ReconcileMetrics, result: FinalizeResult): void {
    for (const t of m.perAddressType) {
      this.#added.observe(t.added);
      this.#removed.observe(t.removed);
    }
    for (const operation of ["create", "update", "delete"] as const) {
      if (result.changes[operation] > 0) this.#changes.inc({ operation }, result.changes[operation]);
    }
    this.#changedPerSync.observe(
      { topology: m.topology, traffic_distribution: m.trafficDistribution },
      result.slicesChanged,
    );
    this.#services.set(serviceKey, m);
    if (m.trafficDistribution === "") this.#trafficDistribution.delete(serviceKey);
    else this.#trafficDistribution.set(serviceKey, m.trafficDistribution);
    const [namespace = "", service = ""] = serviceKey.split("/");
    this.#fragmentation.set({ namespace, service }, m.fragmentationRatio);
    this.#refresh();
  }

  syncDone(result: SyncResult): void {
    this.#syncs.inc({ result });
  }

  deleteService(serviceKey: string): void {
    this.#services.delete(serviceKey);
    this.#trafficDistribution.delete(serviceKey);
    const [namespace = "", service = ""] = serviceKey.split("/");
    this.#fragmentation.remove({ namespace, service });
    this.#refresh();
  }

  #refresh(): void {
    let endpoints = 0;
    let slices = 0;
    let desired = 0;
    for (const s of this.#services.values()) {
      endpoints += s.endpointsDesired;
      slices += s.numEndpointSlices;
      desired += s.desiredEndpointSlices;
    }
    this.#endpointsDesired.set(endpoints);
    this.#numSlices.set(slices);
    this.#desiredSlices.set(desired);
    this.#byTrafficDistribution.reset();
    const counts = new Map<string, number>();
    for (const td of this.#trafficDistribution.values()) counts.set(td, (counts.get(td) ?? 0) + 1);
    for (const [td, n] of counts) this.#byTrafficDistribution.set({ traffic_distribution: td }, n);
  }
}

/** endpoint_slice_mirroring_controller_*: what each mirroring sync changed. */
export class MirroringMetrics {
  readonly #perSync: Record<"added" | "updated" | "removed" | "addressesSkipped", Histogram>;
  readonly #changes: Counter<"operation">;

  constructor(registry: Registry) {
    const registers = [registry];
    const histogram = (name: string, help: string) =>
      new Histogram({ name: `${MIRRORING}_${name}`, help, buckets: ENDPOINT_BUCKETS, registers });
    this.#perSync = {
      added: histogram("endpoints_added_per_sync", "Number of endpoints added on each Endpoints sync"),
      updated: histogram("endpoints_updated_per_sync", "Number of endpoints updated on each Endpoints sync"),
      removed: histogram("endpoints_removed_per_sync", "Number of endpoints removed on each Endpoints sync"),
      addressesSkipped: histogram(
        "addresses_skipped_per_sync",
        "Number of addresses skipped on each Endpoints sync due to being invalid or exceeding MaxEndpointsPerSubset",
      ),
    };
    this.#changes = new Counter({
      name: `${MIRRORING}_changes`,
      help: "Number of EndpointSlice changes",
      labelNames: ["operation"],
      registers,
    });
  }

  observeSync(m: { added: number; updated: number; removed: number; addressesSkipped: number }): void {
    for (const key of ["added", "updated", "removed", "addressesSkipped"] as const)
      this.#perSync[key].observe(m[key]);
  }

  change(operation: "create" | "update" | "delete"): void {
    this.#changes.inc({ operation });
  }
}
