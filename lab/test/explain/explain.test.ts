// explain's core on the fixture rulesets (fixtures/, read back from a real kernel): what each report says for
// Services with hints, traffic policies, no endpoints and session affinity, in both modes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type ExplainInput, explain } from "../../src/explain/explain.js";
import {
  empty,
  hinted,
  local,
  NODE,
  NODE_LABELS,
  OUTSIDE_IP,
  POD_IP,
  sticky,
  web,
} from "./fixture-cluster.js";

const rulesets = {
  nftables: readFileSync(join(import.meta.dirname, "fixtures", "nftables.txt"), "utf8"),
  iptables: readFileSync(join(import.meta.dirname, "fixtures", "iptables.txt"), "utf8"),
};

type Case = typeof hinted;

function run(mode: keyof typeof rulesets, c: Case, sourceIP: string, over: Partial<ExplainInput> = {}) {
  const port = c.service.spec?.ports?.[0];
  if (!port) throw new Error("fixture Service without a port");
  return explain({
    live: { mode, text: rulesets[mode] },
    source: "fixture",
    node: { name: NODE.name, labels: NODE_LABELS, addresses: [NODE.ip, "127.0.0.1"] },
    packet: { sourceIP, destIP: c.service.spec?.clusterIP ?? "", destPort: port.port },
    from: sourceIP,
    to: "the Service",
    target: { service: c.service, slices: c.slices, port, entry: "ClusterIP" },
    fromInside: sourceIP === POD_IP,
    onNode: sourceIP === POD_IP,
    ...over,
  });
}

const destinations = (r: ReturnType<typeof run>) =>
  r.trace.destinations.map((d) => `${d.output} ${(d.probability * 100).toFixed(1)}%`);

for (const mode of ["nftables", "iptables"] as const) {
  describe(`explain, ${mode} mode`, () => {
    test("hints: the two endpoints hinted for node-1's zone, half each; the rules agree with the slices", () => {
      const r = run(mode, hinted, POD_IP);
      assert.deepEqual(r.trace.problems, []);
      assert.deepEqual(destinations(r), ["10.244.1.5:8080 50.0%", "10.244.3.5:8080 50.0%"]);
      assert.match(r.text, /hints: every ready endpoint has a zone hint and 2 name zone-a, node-1's zone/);
      assert.match(r.text, /the rules agree with the EndpointSlices: 10\.244\.1\.5:8080, 10\.244\.3\.5:8080/);
      assert.match(r.text, /10\.244\.3\.5:8080 +50\.0% +pod default\/pod-3-5 on node-3 \(zone-a\)/);
      assert.match(r.text, /masquerade: no/);
    });

    test("no hints: three endpoints, a third each, and the rule that chose", () => {
      const r = run(mode, web, POD_IP);
      assert.deepEqual(destinations(r), [
        "10.244.1.6:8080 33.3%",
        "10.244.2.6:8080 33.3%",
        "10.244.3.6:8080 33.3%",
      ]);
      assert.match(r.text, /then one of 3 ways, chosen at random per connection/);
      const choice = mode === "nftables" ? /numgen 2 of 3: 10\.244\.3\.6 \. 8080/ : /--probability 0\.5/;
      assert.match(r.text, choice);
    });

    test("from outside the cluster: masqueraded, and the rule that marked it is named", () => {
      const r = run(mode, web, OUTSIDE_IP);
      assert.ok(r.trace.destinations.every((d) => d.masq));
      const marker =
        mode === "nftables"
          ? /services: ip daddr @cluster-ips ip saddr != 10\.244\.0\.0\/16 mark set mark or 0x00004000 +# masquerade clusterIP traffic from outside cluster/
          : /KUBE-SVC-\S+: ! -s 10\.244\.0\.0\/16 -d 10\.96\.0\.60\/32 -p tcp -m tcp --dport 80 -j KUBE-MARK-MASQ/;
      assert.match(r.text, /masquerade: yes/);
      assert.match(r.text, marker);
    });

    test("internalTrafficPolicy Local with no endpoint on this node: dropped, and why", () => {
      const r = run(mode, local, POD_IP);
      assert.deepEqual(destinations(r), ["DROP 100.0%"]);
      assert.match(r.text, /Local policy and no usable endpoint on node-1: the proxy drops the traffic here/);
      assert.match(r.text, /the rules agree with the EndpointSlices: DROP/);
    });

    test("no endpoints: rejected, by the Service's own entry", () => {
      const r = run(mode, empty, POD_IP);
      assert.deepEqual(destinations(r), ["REJECT 100.0%"]);
      const entry =
        mode === "nftables"
          ? /@no-endpoint-services: 10\.96\.0\.80 \. tcp \. 80 \(default\/empty:http\) : goto reject-chain/
          : /-j REJECT --reject-with icmp-port-unreachable +# default\/empty:http has no endpoints/;
      assert.match(r.text, entry);
      assert.match(r.text, /no endpoint is ready or serving anywhere: the proxy rejects/);
    });

    test("session affinity: either endpoint for a new client, and the affinity is said", () => {
      const r = run(mode, sticky, POD_IP);
      assert.deepEqual(destinations(r), ["10.244.1.9:8080 50.0%", "10.244.2.9:8080 50.0%"]);
      assert.match(r.text, /session affinity ClientIP \(10800 s\)/);
    });

    test("NodePort with externalTrafficPolicy Local from outside: only node-1's endpoint, client address kept", () => {
      const port = web.service.spec?.ports?.[0];
      if (!port) return assert.fail("no port");
      const r = run(mode, web, OUTSIDE_IP, {
        packet: { sourceIP: OUTSIDE_IP, destIP: NODE.ip, destPort: 30080 },
        target: { service: web.service, slices: web.slices, port, entry: "NodePort" },
      });
      assert.deepEqual(destinations(r), ["10.244.1.6:8080 100.0%"]);
      assert.match(r.text, /externalTrafficPolicy Local/);
      assert.match(r.text, /masquerade: no/);
      assert.match(r.text, /the rules agree with the EndpointSlices: 10\.244\.1\.6:8080/);
    });

    test("rules that lag the slices are called out", () => {
      const moved = structuredClone(hinted);
      const ep = moved.slices[0]?.endpoints?.[0];
      if (ep) ep.addresses = ["10.244.1.77"];
      const r = run(mode, moved, POD_IP);
      assert.match(
        r.text,
        /the rules differ from the EndpointSlices: they send to 10\.244\.1\.5:8080, 10\.244\.3\.5:8080, the slices say 10\.244\.1\.77:8080, 10\.244\.3\.5:8080/,
      );
    });

    test("an address no Service has: the rules alone answer", () => {
      const r = explain({
        live: { mode, text: rulesets[mode] },
        source: "fixture",
        node: { name: NODE.name, labels: NODE_LABELS, addresses: [NODE.ip] },
        packet: { sourceIP: POD_IP, destIP: "10.96.0.99", destPort: 80 },
        from: POD_IP,
        to: "10.96.0.99:80",
        fromInside: true,
        onNode: true,
      });
      // nftables drops what goes to an unallocated ClusterIP; iptables lets it through un-NATed.
      assert.deepEqual(destinations(r), [mode === "nftables" ? "DROP 100.0%" : "ACCEPT 100.0%"]);
      assert.match(r.text, /why: no Service has 10\.96\.0\.99:80: the rules alone answer/);
    });
  });
}
