// What --from and --to name, and how they are found among the API's objects.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Node, Service } from "kubernetes-types/core/v1.js";
import { parseAddresses } from "../../src/explain/node-addresses.js";
import { nodeFor, parseFrom, parseTo, pickServicePort, serviceAt } from "../../src/explain/targets.js";
import { NODE, web } from "./fixture-cluster.js";

const node = (name: string, ip: string, podCIDR: string): Node => ({
  metadata: { name },
  spec: { podCIDR, podCIDRs: [podCIDR] },
  status: { addresses: [{ type: "InternalIP", address: ip }] },
});
const nodes = [
  node("node-1", "198.18.0.11", "10.244.1.0/24"),
  node("node-2", "198.18.0.12", "10.244.2.0/24"),
];

const twoPorts: Service = {
  metadata: { namespace: "default", name: "dns" },
  spec: {
    clusterIP: "10.96.0.10",
    ports: [
      { name: "dns", port: 53, protocol: "UDP" },
      { name: "dns-tcp", port: 53, protocol: "TCP" },
      { name: "metrics", port: 9153, protocol: "TCP" },
    ],
  },
};

describe("--from and --to", () => {
  test("pods, Services and addresses", () => {
    assert.deepEqual(parseFrom("client"), { kind: "pod", namespace: "default", name: "client" });
    assert.deepEqual(parseFrom("team-a/client-7d9"), {
      kind: "pod",
      namespace: "team-a",
      name: "client-7d9",
    });
    assert.deepEqual(parseFrom("10.244.1.5"), { kind: "ip", ip: "10.244.1.5" });
    assert.deepEqual(parseFrom("fd00:10:244::5"), { kind: "ip", ip: "fd00:10:244::5" });
    assert.deepEqual(parseTo("echo"), { kind: "service", namespace: "default", name: "echo" });
    assert.deepEqual(parseTo("kube-system/kube-dns:dns-tcp"), {
      kind: "service",
      namespace: "kube-system",
      name: "kube-dns",
      port: "dns-tcp",
    });
    assert.deepEqual(parseTo("10.96.0.10:53"), { kind: "address", ip: "10.96.0.10", port: 53 });
    assert.deepEqual(parseTo("[fd00:10:96::a]:53"), { kind: "address", ip: "fd00:10:96::a", port: 53 });
  });

  test("bad ones are one line saying what is wrong", () => {
    assert.throws(
      () => parseTo("10.96.0.10"),
      /^Error: --to 10\.96\.0\.10: an address needs a port \(IP:PORT/,
    );
    assert.throws(() => parseTo("10.96.0.10:70000"), /port 70000 is not 1-65535/);
    assert.throws(() => parseTo("Echo Service"), /--to Echo Service: neither a Service/);
    assert.throws(() => parseFrom("a/b/c"), /--from a\/b\/c: neither a pod/);
  });

  test("a Service port by name or number; several ports need naming", () => {
    assert.equal(pickServicePort(twoPorts, "metrics").port, 9153);
    assert.equal(pickServicePort(twoPorts, "53", "UDP").name, "dns");
    assert.equal(pickServicePort(twoPorts, undefined, "UDP").name, "dns");
    assert.throws(
      () => pickServicePort(twoPorts, undefined),
      /^Error: Service default\/dns has several ports \(dns \(53\/UDP\), dns-tcp \(53\/TCP\), metrics \(9153\/TCP\)\); name one: --to default\/dns:PORT$/,
    );
    assert.throws(
      () => pickServicePort(twoPorts, "http"),
      /Service default\/dns has no port http \(ports: dns/,
    );
  });

  test("an address is found as a ClusterIP, or a NodePort on a node's address", () => {
    assert.equal(serviceAt([twoPorts, web.service], "10.96.0.10", 53, "UDP", [])?.port.name, "dns");
    const nodePort = serviceAt([twoPorts, web.service], NODE.ip, 30080, "TCP", [NODE.ip]);
    assert.deepEqual([nodePort?.service.metadata?.name, nodePort?.entry], ["web", "NodePort"]);
    assert.equal(serviceAt([twoPorts, web.service], NODE.ip, 30080, "TCP", []), undefined);
    assert.equal(serviceAt([twoPorts], "10.96.0.10", 53, "TCP", [])?.port.name, "dns-tcp");
  });

  test("the node: --node, the pod's, the one whose address or pod range the client is in", () => {
    assert.equal(nodeFor(nodes, "10.244.2.9", undefined), "node-2");
    assert.equal(nodeFor(nodes, "198.18.0.11", undefined), "node-1");
    assert.equal(nodeFor(nodes, "10.244.2.9", "node-1"), "node-1");
    assert.equal(nodeFor(nodes, "203.0.113.7", undefined, "node-2"), "node-2");
    assert.throws(
      () => nodeFor(nodes, "203.0.113.7", undefined),
      /--from 203\.0\.113\.7 is no node's address and in no node's pod range: name the node whose rules to read with --node \(node-1, node-2\)/,
    );
    assert.throws(
      () => nodeFor(nodes, "10.244.2.9", undefined, "node-9"),
      /--node node-9: no such node \(nodes: node-1, node-2\)/,
    );
  });

  test("a node's addresses from ip -o addr", () => {
    const text = [
      "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever",
      "1: lo    inet6 ::1/128 scope host noprefixroute \\       valid_lft forever preferred_lft forever",
      "2: eth0    inet 198.18.0.11/24 brd 198.18.0.255 scope global eth0\\       valid_lft forever",
      "3: cbr0    inet 10.244.1.1/24 brd 10.244.1.255 scope global cbr0\\       valid_lft forever",
    ].join("\n");
    assert.deepEqual(parseAddresses(text), ["127.0.0.1", "::1", "198.18.0.11", "10.244.1.1"]);
  });
});
