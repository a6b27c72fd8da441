// Which socket-balanced UDP flows a sync leaves stale (src/ebpf/stale-flows.ts): the conntrack reconciler's rules
// (UDP only, serving endpoints keep their flows, every frontend of the port), judged between two programmed states.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import type { Service } from "kubernetes-types/core/v1.js";
import type { Endpoint, EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { flowName, staleFlows } from "../../src/ebpf/stale-flows.js";
import { EndpointsChangeTracker } from "../../src/model/endpoints-change-tracker.js";
import { ServiceChangeTracker } from "../../src/model/service-change-tracker.js";
import {
  buildMaps,
  makeService,
  makeSlice,
  NODE_IP,
  NODE_IPV6,
  NODE_NAME,
} from "../../src/testing/fixtures.js";

const dns = (spec: Partial<NonNullable<Service["spec"]>> = {}, protocol: "UDP" | "TCP" = "UDP") =>
  makeService("ns1", "dns", {
    clusterIP: "172.30.0.10",
    ports: [{ name: "dns", port: 53, protocol }],
    ...spec,
  });

const ep = (ip: string, conditions: Endpoint["conditions"] = {}): Endpoint => ({
  addresses: [ip],
  conditions,
});

const slice = (svc: string, eps: Endpoint[], protocol: "UDP" | "TCP" = "UDP", family: IPFamily = "IPv4") =>
  makeSlice("ns1", svc, "a", eps, [{ name: "dns", port: 5353, protocol }], family);

const state = (services: Service[], slices: EndpointSlice[], family: IPFamily = "IPv4") =>
  buildMaps(family, services, slices);

/** staleFlows over IPv4 states, as flow names. */
function stale(before: ReturnType<typeof state>, after: ReturnType<typeof state>, nodeIPs = [NODE_IP]) {
  return staleFlows(nodeIPs, before, after).map(flowName);
}

describe("staleFlows", () => {
  test("an endpoint gone from a UDP Service: its flow from the ClusterIP, no other", () => {
    const before = state([dns()], [slice("dns", [ep("10.180.0.1"), ep("10.180.0.2")])]);
    const after = state([dns()], [slice("dns", [ep("10.180.0.2")])]);
    assert.deepEqual(stale(before, after), ["172.30.0.10:53 -> 10.180.0.1:5353"]);
  });

  test("nothing changed, or only endpoints added: nothing is stale", () => {
    const one = state([dns()], [slice("dns", [ep("10.180.0.1")])]);
    const two = state([dns()], [slice("dns", [ep("10.180.0.1"), ep("10.180.0.2")])]);
    assert.deepEqual(stale(one, one), []);
    assert.deepEqual(stale(one, two), []);
  });

  test("a terminating endpoint keeps its flows while it serves, and loses them when it stops", () => {
    const before = state([dns()], [slice("dns", [ep("10.180.0.1"), ep("10.180.0.2")])]);
    const terminating = state(
      [dns()],
      [
        slice("dns", [
          ep("10.180.0.1", { ready: false, serving: true, terminating: true }),
          ep("10.180.0.2"),
        ]),
      ],
    );
    const stopped = state(
      [dns()],
      [
        slice("dns", [
          ep("10.180.0.1", { ready: false, serving: false, terminating: true }),
          ep("10.180.0.2"),
        ]),
      ],
    );
    assert.deepEqual(stale(before, terminating), []);
    assert.deepEqual(stale(terminating, stopped), ["172.30.0.10:53 -> 10.180.0.1:5353"]);
    // Not serving in the state before: its flows were ended when it stopped, not again.
    assert.deepEqual(stale(stopped, state([dns()], [slice("dns", [ep("10.180.0.2")])])), []);
  });

  test("TCP ports are left alone, as the reconciler leaves their entries", () => {
    const before = state([dns({}, "TCP")], [slice("dns", [ep("10.180.0.1")], "TCP")]);
    const after = state([dns({}, "TCP")], [slice("dns", [], "TCP")]);
    assert.deepEqual(stale(before, after), []);
  });

  test("every frontend of the port: external IPs, load-balancer VIPs, and the NodePort on each node address", () => {
    const spec = { type: "LoadBalancer" as const, externalIPs: ["192.168.99.11"] };
    const withPorts = (eps: Endpoint[]) => {
      const svc = makeService(
        "ns1",
        "dns",
        { ...dns().spec, ...spec, ports: [{ name: "dns", port: 53, protocol: "UDP", nodePort: 30053 }] },
        { loadBalancer: { ingress: [{ ip: "5.6.7.8" }] } },
      );
      return state([svc], [slice("dns", eps)]);
    };
    const before = withPorts([ep("10.180.0.1"), ep("10.180.0.2")]);
    const after = withPorts([ep("10.180.0.2")]);
    assert.deepEqual(stale(before, after, [NODE_IP, "192.168.0.9"]), [
      "172.30.0.10:53 -> 10.180.0.1:5353",
      "192.168.0.2:30053 -> 10.180.0.1:5353",
      "192.168.0.9:30053 -> 10.180.0.1:5353",
      "192.168.99.11:53 -> 10.180.0.1:5353",
      "5.6.7.8:53 -> 10.180.0.1:5353",
    ]);
  });

  test("a backend gone from one Service but serving another keeps the other's flows", () => {
    const other = makeService("ns1", "other", {
      clusterIP: "172.30.0.11",
      ports: [{ name: "dns", port: 53, protocol: "UDP" }],
    });
    const both = [ep("10.180.0.1"), ep("10.180.0.2")];
    const before = state([dns(), other], [slice("dns", both), slice("other", both)]);
    const after = state([dns(), other], [slice("dns", [ep("10.180.0.2")]), slice("other", both)]);
    assert.deepEqual(stale(before, after), ["172.30.0.10:53 -> 10.180.0.1:5353"]);
  });

  test("a frontend two Services share keeps a backend either still serves", () => {
    const shared = { externalIPs: ["192.168.99.11"] };
    const a = dns(shared);
    const b = makeService("ns1", "other", {
      clusterIP: "172.30.0.11",
      ports: [{ name: "dns", port: 53, protocol: "UDP" }],
      ...shared,
    });
    const before = state([a, b], [slice("dns", [ep("10.180.0.1")]), slice("other", [ep("10.180.0.2")])]);
    const after = state([a, b], [slice("dns", [ep("10.180.0.2")]), slice("other", [ep("10.180.0.1")])]);
    // Each ClusterIP lost its backend; through the shared external IP both are still served.
    assert.deepEqual(stale(before, after), [
      "172.30.0.10:53 -> 10.180.0.1:5353",
      "172.30.0.11:53 -> 10.180.0.2:5353",
    ]);
  });

  test("as the Proxier hands them over: only changed ports are judged, against every port of their frontends", () => {
    // The trackers keep an unchanged Service's records from one map to the next, as between two syncs.
    const services = new ServiceChangeTracker("IPv4");
    const endpoints = new EndpointsChangeTracker({ family: "IPv4", nodeName: NODE_NAME });
    const apply = () => ({ services: services.apply().services, endpoints: endpoints.apply().endpoints });
    const shared = { externalIPs: ["192.168.99.11"] };
    const other = makeService("ns1", "other", {
      clusterIP: "172.30.0.11",
      ports: [{ name: "dns", port: 53, protocol: "UDP" }],
      ...shared,
    });
    services.update(undefined, dns(shared));
    services.update(undefined, other);
    endpoints.endpointSliceUpdate(slice("dns", [ep("10.180.0.1")]), false);
    endpoints.endpointSliceUpdate(slice("other", [ep("10.180.0.1")]), false);
    const before = apply();
    endpoints.endpointSliceUpdate(slice("dns", [ep("10.180.0.2")]), false);
    const after = apply();
    const untouched = before.endpoints.get("ns1/other:dns/UDP");
    assert.ok(untouched && after.endpoints.get("ns1/other:dns/UDP") === untouched);
    // The unchanged Service still serves pod 1 through the shared external IP: only dns's ClusterIP lost it.
    assert.deepEqual(stale(before, after), ["172.30.0.10:53 -> 10.180.0.1:5353"]);
    assert.deepEqual(stale(after, after), []);
  });

  test("a Service deleted: every flow of its frontends", () => {
    const before = state([dns()], [slice("dns", [ep("10.180.0.1"), ep("10.180.0.2")])]);
    const after = state([], []);
    assert.deepEqual(stale(before, after), [
      "172.30.0.10:53 -> 10.180.0.1:5353",
      "172.30.0.10:53 -> 10.180.0.2:5353",
    ]);
  });

  test("a ClusterIP that changed: the old one's flows go, the new one has none to lose", () => {
    const before = state([dns()], [slice("dns", [ep("10.180.0.1")])]);
    const after = state([dns({ clusterIP: "172.30.0.12" })], [slice("dns", [ep("10.180.0.1")])]);
    assert.deepEqual(stale(before, after), ["172.30.0.10:53 -> 10.180.0.1:5353"]);
  });

  test("IPv6: addresses in canonical text, node addresses too, and the record the map key is encoded from", () => {
    const svc = dns({
      clusterIP: "fd00:172:30::10",
      ipFamilies: ["IPv6"],
      type: "NodePort",
      ports: [{ name: "dns", port: 53, protocol: "UDP", nodePort: 30053 }],
    });
    const before = state(
      [svc],
      [slice("dns", [ep("fd00:10:180::1"), ep("fd00:10:180::2")], "UDP", "IPv6")],
      "IPv6",
    );
    const after = state([svc], [slice("dns", [ep("fd00:10:180::2")], "UDP", "IPv6")], "IPv6");
    const flows = staleFlows(["fd00:192:168:0:0::2"], before, after);
    assert.deepEqual(flows, [
      {
        frontendAddress: "fd00:172:30::10",
        frontendPort: 53,
        backendAddress: "fd00:10:180::1",
        backendPort: 5353,
      },
      {
        frontendAddress: NODE_IPV6,
        frontendPort: 30053,
        backendAddress: "fd00:10:180::1",
        backendPort: 5353,
      },
    ]);
  });
});
