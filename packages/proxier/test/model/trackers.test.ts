import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EndpointsChangeTracker } from "../../src/model/endpoints-change-tracker.js";
import { ServiceChangeTracker } from "../../src/model/service-change-tracker.js";
import { servicePortsFromService } from "../../src/model/service-port.js";
import { makeService, makeSlice, NODE_NAME } from "../../src/testing/fixtures.js";

const svc1 = (port = 80) =>
  makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: [{ name: "p80", port, protocol: "TCP" }] });

describe("servicePortsFromService", () => {
  test("keeps valid fields and warns about malformed ones", () => {
    const s = makeService(
      "ns1",
      "svc1",
      {
        type: "LoadBalancer",
        clusterIP: "172.30.0.41",
        clusterIPs: ["172.30.0.41", "fd00:172:30::41"],
        externalIPs: ["192.168.99.11", "not-an-ip", "fd00::99"],
        loadBalancerSourceRanges: [" 203.0.113.5/25", "bogus"],
        externalTrafficPolicy: "Local",
        healthCheckNodePort: 30000,
        sessionAffinity: "ClientIP",
        ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 30080 }],
      },
      { loadBalancer: { ingress: [{ ip: "1.2.3.4" }, { ip: "5.6.7.8", ipMode: "Proxy" }] } },
    );
    const { ports, warnings } = servicePortsFromService(s, "IPv4");
    assert.equal(ports.length, 1);
    const p = ports[0];
    assert.deepEqual(p?.externalIPs, ["192.168.99.11"]);
    assert.deepEqual(p?.loadBalancerVIPs, ["1.2.3.4"]);
    assert.deepEqual(p?.loadBalancerSourceRanges, ["203.0.113.0/25"]);
    assert.equal(p?.stickyMaxAgeSeconds, 10800);
    assert.equal(p?.healthCheckNodePort, 30000);
    assert.equal(warnings.length, 2);
    const v6 = servicePortsFromService(s, "IPv6").ports[0];
    assert.equal(v6?.clusterIP, "fd00:172:30::41");
    assert.deepEqual(v6?.externalIPs, ["fd00::99"]);
  });

  test("headless and ExternalName services are skipped", () => {
    assert.equal(
      servicePortsFromService(makeService("a", "b", { clusterIP: "None", ports: [{ port: 80 }] }), "IPv4")
        .ports.length,
      0,
    );
    assert.equal(
      servicePortsFromService(
        makeService("a", "b", { type: "ExternalName", externalName: "x.example" }),
        "IPv4",
      ).ports.length,
      0,
    );
  });
});

describe("ServiceChangeTracker", () => {
  test("reports changed services and drops a change that is undone", () => {
    const t = new ServiceChangeTracker("IPv4");
    assert.equal(t.update(undefined, svc1()), true);
    const r1 = t.apply();
    assert.deepEqual([...r1.updatedServices], ["ns1/svc1"]);
    assert.equal(r1.services.size, 1);
    assert.equal(t.update(svc1(), svc1(81)), true);
    assert.equal(t.update(svc1(81), svc1()), false);
    const r2 = t.apply();
    assert.equal(r2.updatedServices.size, 0);
    assert.equal(r2.services.size, 1);
    t.update(svc1(), undefined);
    const r3 = t.apply();
    assert.equal(r3.services.size, 0);
    assert.equal(r1.services.size, 1, "earlier results are not mutated");
  });

  test("reports the port keys changed Services had and have, for a partial sync", () => {
    const t = new ServiceChangeTracker("IPv4");
    t.update(undefined, svc1());
    assert.deepEqual([...t.apply().updatedPorts], ["ns1/svc1:p80/TCP"]);
    const renamed = makeService("ns1", "svc1", {
      clusterIP: "172.30.0.41",
      ports: [{ name: "web", port: 80, protocol: "TCP" }],
    });
    t.update(svc1(), renamed);
    const r = t.apply();
    assert.deepEqual([...r.updatedPorts].sort(), ["ns1/svc1:p80/TCP", "ns1/svc1:web/TCP"]);
    assert.deepEqual([...r.services.keys()], ["ns1/svc1:web/TCP"]);
    assert.equal(t.apply().updatedPorts.size, 0);
  });
});

describe("EndpointsChangeTracker", () => {
  const slice = (ip: string, trigger?: string) => {
    const s = makeSlice(
      "ns1",
      "svc1",
      "a",
      [{ addresses: [ip], nodeName: NODE_NAME }],
      [{ name: "p80", port: 80 }],
    );
    if (trigger)
      s.metadata = {
        ...s.metadata,
        annotations: { "endpoints.kubernetes.io/last-change-trigger-time": trigger },
      };
    return s;
  };

  test("applies slices, marks local endpoints and collects trigger times after start", () => {
    const t = new EndpointsChangeTracker({
      family: "IPv4",
      nodeName: NODE_NAME,
      now: () => new Date("2026-01-01T00:00:00Z"),
    });
    assert.equal(t.endpointSliceUpdate(slice("10.180.0.1", "2026-01-01T00:00:05Z"), false), true);
    const r = t.apply();
    assert.deepEqual([...r.updatedServices], ["ns1/svc1"]);
    const eps = r.endpoints.get("ns1/svc1:p80/TCP");
    assert.equal(eps?.[0]?.ip, "10.180.0.1");
    assert.equal(eps?.[0]?.isLocal, true);
    assert.deepEqual(r.lastChangeTriggerTimes.get("ns1/svc1"), [new Date("2026-01-01T00:00:05Z")]);

    t.endpointSliceUpdate(slice("10.180.0.2", "2025-12-31T00:00:00Z"), false);
    const r2 = t.apply();
    assert.equal(r2.lastChangeTriggerTimes.size, 0, "times from before the tracker started are not reported");
  });

  test("a change that is undone is dropped; other families are ignored", () => {
    const t = new EndpointsChangeTracker({ family: "IPv4", nodeName: NODE_NAME });
    t.endpointSliceUpdate(slice("10.180.0.1"), false);
    t.apply();
    assert.equal(t.endpointSliceUpdate(slice("10.180.0.2"), false), true);
    assert.equal(t.endpointSliceUpdate(slice("10.180.0.1"), false), false);
    assert.equal(t.apply().updatedServices.size, 0);
    const v6 = makeSlice("ns1", "svc1", "b", [{ addresses: ["fd00::1"] }], [{ port: 80 }], "IPv6");
    assert.equal(t.endpointSliceUpdate(v6, false), false);
    t.endpointSliceUpdate(slice("10.180.0.1"), true);
    assert.equal(t.apply().endpoints.size, 0);
  });

  test("conntrack cleanup is required when a changed Service had or has UDP endpoints", () => {
    // Upstream's ConntrackCleanupRequired (pkg/proxy/endpointschangetracker.go).
    const t = new EndpointsChangeTracker({ family: "IPv4", nodeName: NODE_NAME });
    const dns = (ips: string[], protocol: "UDP" | "TCP" = "UDP") =>
      makeSlice(
        "ns1",
        "dns",
        "a",
        ips.map((ip) => ({ addresses: [ip] })),
        [{ name: "dns", port: 53, protocol }],
      );
    assert.equal(t.apply().conntrackCleanupRequired, false, "nothing changed");
    t.endpointSliceUpdate(slice("10.180.0.1"), false);
    assert.equal(t.apply().conntrackCleanupRequired, false, "a TCP-only Service changed");
    t.endpointSliceUpdate(dns(["10.180.0.2"]), false);
    assert.equal(t.apply().conntrackCleanupRequired, true, "UDP endpoints appeared");
    t.endpointSliceUpdate(dns(["10.180.0.2"], "TCP"), false);
    assert.equal(
      t.apply().conntrackCleanupRequired,
      true,
      "the UDP port went away (it had endpoints before)",
    );
    t.endpointSliceUpdate(dns(["10.180.0.3"], "TCP"), false);
    assert.equal(t.apply().conntrackCleanupRequired, false, "TCP before and after");
    t.endpointSliceUpdate(dns(["10.180.0.3"]), false);
    t.apply();
    t.endpointSliceUpdate(dns([]), false);
    assert.equal(t.apply().conntrackCleanupRequired, true, "the last UDP endpoint went away");
  });
});
