// syncService against stand-in informers whose slice cache lags behind the controller's own write,
// as it does on one Node thread when the apiserver's answer arrives before the watch echo.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { discardLogger, type Informer, type KubeObject, type RestClient } from "@switchyard/kube";
import type { EndpointSlice } from "@switchyard/slice-controller";
import type { Service } from "kubernetes-types/core/v1.js";
import { Registry } from "prom-client";
import { EndpointSliceController, StaleInformerCacheError } from "../src/endpointslice-controller.js";
import { ControllerMetrics } from "../src/metrics.js";

const service: Service = {
  metadata: { namespace: "ns", name: "web", uid: "svc-uid" },
  spec: { selector: { app: "web" }, ports: [{ port: 80 }], clusterIP: "10.96.0.10", ipFamilies: ["IPv4"] },
};

function setup() {
  // What the slice informer holds; the test decides when the echo of a write lands in it.
  const cached: EndpointSlice[] = [];
  const written: EndpointSlice[] = [];
  let serial = 0;
  const client = {
    async create(_res: unknown, obj: EndpointSlice) {
      const slice = {
        ...obj,
        metadata: { ...obj.metadata, name: `web-${++serial}`, uid: `uid-${serial}`, generation: 1 },
      };
      written.push(slice);
      return slice;
    },
  } as unknown as RestClient;
  const informer = <T extends KubeObject>(o: object) =>
    ({ addEventHandler: () => () => {}, ...o }) as unknown as Informer<T>;
  const controller = new EndpointSliceController({
    client,
    services: informer<Service>({ get: () => service, list: () => [service] }),
    pods: informer({ list: () => [] }),
    nodes: informer({ get: () => undefined, list: () => [] }),
    slices: informer<EndpointSlice>({ byIndex: () => [...cached] }),
    queue: { add() {}, addAfter() {} } as never,
    recorder: { event() {} } as never,
    metrics: new ControllerMetrics(new Registry()),
    logger: discardLogger,
    maxEndpointsPerSlice: 100,
    batchPeriodMs: 0,
  });
  return { controller, cached, written };
}

describe("a sync right after our own write", () => {
  test("waits for the informer to show the write instead of refusing", async () => {
    const { controller, cached, written } = setup();
    await controller.syncService("ns/web");
    assert.equal(written.length, 1, "the placeholder slice");
    const echo = setTimeout(() => cached.push(...written), 50);
    await controller.syncService("ns/web");
    clearTimeout(echo);
    assert.equal(written.length, 1, "no second placeholder: the sync saw the first");
  });

  test("still refuses when the cache stays behind", async () => {
    const { controller, written } = setup();
    await controller.syncService("ns/web");
    await assert.rejects(controller.syncService("ns/web"), StaleInformerCacheError);
    assert.equal(written.length, 1);
  });
});
