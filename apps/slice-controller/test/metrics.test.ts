import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { FinalizeResult, ReconcileMetrics } from "@switchyard/slice-controller";
import { Registry } from "prom-client";
import { ControllerMetrics } from "../src/metrics.js";

const m = (
  endpoints: number,
  slices: number,
  desired: number,
  trafficDistribution = "",
): ReconcileMetrics => ({
  perAddressType: [{ addressType: "IPv4", added: endpoints, removed: 0, updated: 0 }],
  endpointsAdded: endpoints,
  endpointsRemoved: 0,
  endpointsUpdated: 0,
  endpointsDesired: endpoints,
  numEndpointSlices: slices,
  desiredEndpointSlices: desired,
  fragmentationRatio: slices / desired,
  topology: "Disabled",
  trafficDistribution,
});
const result: FinalizeResult = {
  operations: [],
  changes: { create: 2, update: 1, delete: 0 },
  slicesChanged: 3,
};

async function value(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const metric = await registry.getSingleMetric(name)?.get();
  const match = metric?.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x));
  return match?.value;
}

describe("ControllerMetrics", () => {
  test("gauges are sums of each Service's latest sync, and forget deleted Services", async () => {
    const registry = new Registry();
    const metrics = new ControllerMetrics(registry);
    metrics.observeSync("ns/a", m(250, 4, 3, "PreferClose"), result);
    metrics.observeSync("ns/b", m(10, 1, 1), result);
    metrics.observeSync("ns/a", m(150, 3, 2, "PreferClose"), result);
    assert.equal(await value(registry, "endpoint_slice_controller_endpoints_desired"), 160);
    assert.equal(await value(registry, "endpoint_slice_controller_num_endpoint_slices"), 4);
    assert.equal(await value(registry, "endpoint_slice_controller_desired_endpoint_slices"), 3);
    assert.equal(await value(registry, "endpoint_slice_controller_changes", { operation: "create" }), 6);
    assert.equal(
      await value(registry, "endpoint_slice_controller_services_count_by_traffic_distribution", {
        traffic_distribution: "PreferClose",
      }),
      1,
    );
    assert.equal(
      await value(registry, "switchyard_endpointslice_fragmentation_ratio", {
        namespace: "ns",
        service: "a",
      }),
      1.5,
    );

    metrics.deleteService("ns/a");
    assert.equal(await value(registry, "endpoint_slice_controller_endpoints_desired"), 10);
    assert.equal(
      await value(registry, "switchyard_endpointslice_fragmentation_ratio", {
        namespace: "ns",
        service: "a",
      }),
      undefined,
    );
    assert.equal(
      await value(registry, "endpoint_slice_controller_services_count_by_traffic_distribution", {
        traffic_distribution: "PreferClose",
      }),
      undefined,
    );
  });

  test("syncs are counted by result", async () => {
    const registry = new Registry();
    const metrics = new ControllerMetrics(registry);
    metrics.syncDone("success");
    metrics.syncDone("stale");
    metrics.syncDone("stale");
    assert.equal(await value(registry, "endpoint_slice_controller_syncs", { result: "stale" }), 2);
  });
});
