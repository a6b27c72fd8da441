// The API types are declarations only: these tests hold at compile time (tsc -p tsconfig.json), and run to say so.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { EndpointSlice as EndpointSliceV130 } from "kubernetes-types/discovery/v1.js";
import type { EndpointSlice, ServiceCIDR } from "../src/index.js";

test("a v1.30 EndpointSlice is a basics EndpointSlice, whose hints may name nodes", () => {
  const old: EndpointSliceV130 = {
    addressType: "IPv4",
    endpoints: [{ addresses: ["10.0.0.1"], hints: { forZones: [{ name: "zone-a" }] } }],
  };
  const slice: EndpointSlice = old;
  const withNodes: EndpointSlice = {
    addressType: "IPv4",
    endpoints: [{ addresses: ["10.0.0.1"], hints: { forNodes: [{ name: "node-1" }] } }],
  };
  assert.equal(slice.endpoints[0]?.hints?.forNodes, undefined);
  assert.equal(withNodes.endpoints[0]?.hints?.forNodes?.[0]?.name, "node-1");
});

test("a ServiceCIDR as networking.k8s.io/v1 serves it", () => {
  const cidr: ServiceCIDR = {
    apiVersion: "networking.k8s.io/v1",
    kind: "ServiceCIDR",
    metadata: { name: "kubernetes" },
    spec: { cidrs: ["10.96.0.0/12", "fd00:10:96::/112"] },
    status: {
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: "", reason: "", message: "" }],
    },
  };
  assert.deepEqual(cidr.spec?.cidrs?.length, 2);
});
