// explain's core in ebpf mode, on the fixture cluster (fixture-cluster.ts) rendered for node-1 by the proxier's
// eBPF renderer into FakeBPFMaps and dumped as the node's pins would be: which map entry each connection meets,
// where it ends up, and the API's side; then lb list's text.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type ExplainInput, explain } from "../../src/explain/explain.js";
import { lbListReport } from "../../src/explain/lb-list.js";
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
import { dumpsOf, renderedEBPF } from "./render-fixture.js";

/** A pod of node-2: inside the cluster, but its connections start on another node. */
const OTHER_POD_IP = "10.244.2.20";

const maps = dumpsOf(renderedEBPF());

type Case = typeof hinted;

function run(c: Case, sourceIP: string, over: Partial<ExplainInput> = {}) {
  const port = c.service.spec?.ports?.[0];
  if (!port) throw new Error("fixture Service without a port");
  return explain({
    live: { mode: "ebpf", maps },
    source: "maps pinned under /sys/fs/bpf/switchyard/sy/node-1",
    node: { name: NODE.name, labels: NODE_LABELS, addresses: [NODE.ip, "127.0.0.1"] },
    packet: { sourceIP, destIP: c.service.spec?.clusterIP ?? "", destPort: port.port },
    from: sourceIP,
    to: "the Service",
    target: { service: c.service, slices: c.slices, port, entry: "ClusterIP" },
    fromInside: sourceIP !== OUTSIDE_IP,
    onNode: sourceIP === POD_IP,
    ...over,
  });
}

const destinations = (r: ReturnType<typeof run>) =>
  r.trace.destinations.map((d) => `${d.output} ${(d.probability * 100).toFixed(1)}%`);

/** What the report says of the nodePort frontend, through node-1's address. */
function nodePort(sourceIP: string) {
  const port = web.service.spec?.ports?.[0];
  if (!port) throw new Error("no port");
  return run(web, sourceIP, {
    packet: { sourceIP, destIP: NODE.ip, destPort: 30080 },
    target: { service: web.service, slices: web.slices, port, entry: "NodePort" },
  });
}

describe("explain, ebpf mode", () => {
  test("a pod of the node to a ClusterIP: the internal scope's slot 0, a third per slot, each backend and its reverse NAT", () => {
    const r = run(web, POD_IP);
    assert.deepEqual(r.trace.problems, []);
    assert.deepEqual(destinations(r), [
      "10.244.1.6:8080 33.3%",
      "10.244.2.6:8080 33.3%",
      "10.244.3.6:8080 33.3%",
    ]);
    assert.match(
      r.text,
      /^maps: {4}node-1's kernel, ebpf mode \(maps pinned under \/sys\/fs\/bpf\/switchyard\/sy\/node-1\)$/m,
    );
    assert.match(
      r.text,
      /^ {2}connect4: lb4_services 10\.96\.0\.60:80\/TCP internal slot 0\n {6}→ count 3, revNat \d+, flags CLUSTER_IP$/m,
    );
    assert.match(
      r.text,
      /connect4: lb4_services 10\.96\.0\.60:80\/TCP internal slot 3\n +→ slot 3 of 3: backend \d+/,
    );
    assert.match(r.text, /connect4: lb4_backends id \d+\n +→ 10\.244\.1\.6:8080\/TCP LOCAL/);
    assert.match(r.text, /connect4: lb4_reverse_nat index \d+\n +→ replies from 10\.96\.0\.60:80/);
    assert.match(r.text, /masquerade: no \(balanced when the socket connects/);
    assert.match(
      r.text,
      /the maps agree with the EndpointSlices: 10\.244\.1\.6:8080, 10\.244\.2\.6:8080, 10\.244\.3\.6:8080/,
    );
    assert.doesNotMatch(r.text, /note:/);
  });

  test("hints: the two endpoints hinted for node-1's zone are the only slots", () => {
    const r = run(hinted, POD_IP);
    assert.deepEqual(destinations(r), ["10.244.1.5:8080 50.0%", "10.244.3.5:8080 50.0%"]);
    assert.match(r.text, /hints: every ready endpoint has a zone hint and 2 name zone-a/);
    assert.match(r.text, /the maps agree with the EndpointSlices/);
  });

  test("UDP is looked up by sendmsg4 under the UDP key, which the fixture's TCP Service does not have", () => {
    const r = run(web, POD_IP, {
      packet: { sourceIP: POD_IP, destIP: "10.96.0.60", destPort: 80, protocol: "udp" },
    });
    assert.deepEqual(destinations(r), ["ACCEPT 100.0%"]);
    assert.match(
      r.text,
      /sendmsg4: lb4_services 10\.96\.0\.60:80\/UDP internal slot 0\n +→ no entry: not a service/,
    );
  });

  test("an address no Service has: no entry, nothing translated, and the maps alone answer", () => {
    const r = explain({
      live: { mode: "ebpf", maps },
      source: "maps pinned under /sys/fs/bpf/switchyard/sy/node-1",
      node: { name: NODE.name, labels: NODE_LABELS, addresses: [NODE.ip] },
      packet: { sourceIP: POD_IP, destIP: "10.96.0.99", destPort: 80 },
      from: POD_IP,
      to: "10.96.0.99:80",
      fromInside: true,
      onNode: true,
    });
    assert.deepEqual(destinations(r), ["ACCEPT 100.0%"]);
    assert.match(
      r.text,
      /connect4: lb4_services 10\.96\.0\.99:80\/TCP internal slot 0\n +→ no entry: not a service/,
    );
    assert.match(r.text, /why: no Service has 10\.96\.0\.99:80: the maps alone answer/);
  });

  test("no endpoints: slot 0 says REJECT, and the connect is refused", () => {
    const r = run(empty, POD_IP);
    assert.deepEqual(destinations(r), ["REJECT 100.0%"]);
    assert.match(
      r.text,
      /lb4_services 10\.96\.0\.80:80\/TCP internal slot 0\n +→ count 0, revNat \d+, flags REJECT\|CLUSTER_IP/,
    );
    assert.match(r.text, /the proxy refuses the connection \(ECONNREFUSED at connect\)/);
    assert.match(r.text, /the maps agree with the EndpointSlices: REJECT/);
  });

  test("internalTrafficPolicy Local with no endpoint here: DROP in the maps, a refused connect in words", () => {
    const r = run(local, POD_IP);
    assert.deepEqual(destinations(r), ["DROP 100.0%"]);
    assert.match(r.text, /flags DROP\|CLUSTER_IP/);
    assert.match(
      r.text,
      /Local policy and no usable endpoint on node-1: the proxy refuses the connection here/,
    );
    assert.match(r.text, /the maps agree with the EndpointSlices: DROP/);
  });

  test("session affinity: slot 0 carries it and the report says so", () => {
    const r = run(sticky, POD_IP);
    assert.deepEqual(destinations(r), ["10.244.1.9:8080 50.0%", "10.244.2.9:8080 50.0%"]);
    assert.match(r.text, /flags AFFINITY\|CLUSTER_IP, ClientIP affinity 10800s/);
    assert.match(r.text, /session affinity ClientIP \(10800 s\)/);
  });

  test("a NodePort from a pod of the node: the internal scope has every cluster endpoint (externalTrafficPolicy Local short-circuited)", () => {
    const r = nodePort(POD_IP);
    assert.equal(r.trace.destinations.length, 3);
    assert.match(r.text, /connect4: lb4_services 198\.18\.0\.11:30080\/TCP internal slot 0/);
    assert.match(r.text, /short-circuited to the Cluster policy/);
    assert.match(r.text, /the maps agree with the EndpointSlices/);
  });

  test("a NodePort from outside: the external scope, node-1's endpoint only, the source kept, read by the tc program", () => {
    const r = nodePort(OUTSIDE_IP);
    assert.deepEqual(destinations(r), ["10.244.1.6:8080 100.0%"]);
    assert.match(
      r.text,
      /tc ingress: lb4_services 198\.18\.0\.11:30080\/TCP external slot 0\n +→ count 1, revNat \d+, flags NODE_PORT\|EXTERNAL_LOCAL/,
    );
    assert.match(r.text, /masquerade: no \(external policy Local/);
    assert.match(r.text, /note: this connection starts outside node-1, so it meets the maps' external scope/);
    assert.match(r.text, /which the tc program on\n +the node's devices reads/);
    assert.match(r.text, /the maps agree with the EndpointSlices: 10\.244\.1\.6:8080/);
  });

  test("a pod of another node, read on node-1: the external scope, masqueraded, and the maps still agree", () => {
    const r = run(web, OTHER_POD_IP);
    assert.match(r.text, /tc ingress: lb4_services 10\.96\.0\.60:80\/TCP external slot 0/);
    assert.ok(r.trace.destinations.every((d) => d.masq));
    assert.match(r.text, /masquerade: yes \(from outside the node/);
    assert.match(r.text, /the maps agree with the EndpointSlices/);
  });

  test("maps that lag the slices are called out", () => {
    const moved = structuredClone(hinted);
    const ep = moved.slices[0]?.endpoints?.[0];
    if (ep) ep.addresses = ["10.244.1.77"];
    const r = run(moved, POD_IP);
    assert.match(
      r.text,
      /the maps differ from the EndpointSlices: they send to 10\.244\.1\.5:8080, 10\.244\.3\.5:8080, the slices say 10\.244\.1\.77:8080, 10\.244\.3\.5:8080/,
    );
  });

  test("an entry the codec cannot read is named, not traced", () => {
    const [key] = maps.dumps.services[0] ?? [];
    if (!key) return assert.fail("no service entry");
    const broken = { ...maps, dumps: { ...maps.dumps, services: [[key, new Uint8Array(3)] as const] } };
    const r = run(web, POD_IP, { live: { mode: "ebpf", maps: broken } });
    assert.match(
      r.text,
      /not read or not followed \(1\)[^\n]*\n {2}not decoded: lb4_service is 16 bytes, got 3/,
    );
  });
});

describe("lb list's text", () => {
  test("a node with maps: its line, then cilium-dbg's table; a node without: one line", () => {
    const text = lbListReport(
      [
        { node: "node-1", mode: "ebpf", bpfRoot: "/sys/fs/bpf/switchyard/sy/node-1", families: [maps] },
        { node: "node-2", mode: "nftables", bpfRoot: "/sys/fs/bpf/switchyard/sy/node-2", families: [] },
      ],
      "services",
    );
    const lines = text.split("\n");
    assert.equal(lines[0], "node-1: ebpf mode, maps pinned under /sys/fs/bpf/switchyard/sy/node-1");
    assert.equal(lines[1], "SERVICE ADDRESS           BACKEND ADDRESS (REVNAT_ID) (SLOT)");
    assert.match(text, /^10\.96\.0\.80:80\/TCP\/i {3,}0\.0\.0\.0:0 \(\d+\) \(0\) \[ClusterIP, reject\]$/m);
    assert.match(
      text,
      /^198\.18\.0\.11:30080\/TCP {3,}0\.0\.0\.0:0 \(\d+\) \(0\) \[NodePort, Local\]\n {3,}10\.244\.1\.6:8080\/TCP \(\d+\) \(1\)\n198/m,
    );
    assert.deepEqual(lines.slice(-2), [
      "",
      "node-2: nftables mode, no maps pinned under /sys/fs/bpf/switchyard/sy/node-2",
    ]);
  });

  test("--backends: the backends map by id", () => {
    const text = lbListReport(
      [{ node: "node-1", mode: "ebpf", bpfRoot: "/x", families: [maps] }],
      "backends",
    );
    const lines = text.split("\n");
    assert.equal(lines[1], "ID   BACKEND ADDRESS");
    // hinted's two for zone-a, web's three, sticky's two; local's one endpoint is on node-2 and has no slot here.
    assert.equal(lines.length, 2 + 7);
    assert.ok(
      lines.slice(2).every((l) => /^\d+ +10\.244\.\d+\.\d+:8080\/TCP( LOCAL)?$/.test(l)),
      text,
    );
  });
});
