// The design not taken (bpf/tc-ownct.c, own conntrack and NAT maps), kept as a measuring prototype: it must still
// pass the verifier and carry a NodePort both ways, or ebpf-tc-measure.ts compares against nothing. IPv4, with
// masquerade, its reply program on the bridge the pods answer through.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { removeSockPrograms } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { encodeStruct } from "../../src/ebpf/codec.js";
import { masqueradeKey, masqueradeValue, serviceFlags } from "../../src/ebpf/layout.js";
import { runClient, testPinRoot } from "./ebpf-fixture.js";
import {
  attachPrototypeIn,
  externalServiceSteps,
  PeerServers,
  tcTestsUnavailable,
} from "./ebpf-tc-fixture.js";
import { compilePrototype, removePrototype } from "./ebpf-tc-prototype.js";
import { Topology } from "./topology.js";

const skip = await tcTestsUnavailable();
if (skip) console.log(`# skipping the eBPF tc prototype's kernel test: ${skip}`);

const PODS = ["10.180.0.1", "10.180.0.2"];
const NODE_IP = "192.168.0.2";
const NODE_PORT = 30080;

describe("the own-maps prototype of the tc path", { skip: skip ?? false }, () => {
  let topo: Topology | undefined;
  const servers = new PeerServers();
  const pinRoot = testPinRoot("tc-ownct");
  let objectPath: string | undefined;

  before(async () => {
    topo = await Topology.create(`sy-ebto${process.pid}`, PODS);
    for (const pod of topo.pods) await servers.start(pod.netns, pod.name, 8080);
    objectPath = compilePrototype();
    await attachPrototypeIn(topo.node, objectPath, pinRoot, [
      { device: "eth0", program: "tc_ownct_ingress" },
      { device: "br0", program: "tc_ownct_reply" },
    ]);
    const store = await KernelBPFMapStore.open(pinRoot);
    try {
      const backends = PODS.map((address, i) => ({ id: i + 1, address, port: 8080 }));
      for (const [proto, revNatIndex] of [["TCP", 1] as const, ["UDP", 2] as const]) {
        const svc = { family: "IPv4", address: NODE_IP, port: NODE_PORT, proto, revNatIndex } as const;
        await store.write("IPv4", externalServiceSteps({ ...svc, flags: serviceFlags.NODE_PORT, backends }));
      }
      const slot = encodeStruct(masqueradeKey, "IPv4", { slot: 0 });
      const node = encodeStruct(masqueradeValue, "IPv4", { address: NODE_IP });
      await store.write("IPv4", [{ map: "masquerade", op: "update", entries: [[slot, node]] }]);
    } finally {
      store.close();
    }
  });

  after(async () => {
    await servers.stop();
    await removeSockPrograms(pinRoot);
    await topo?.destroy();
    if (objectPath) removePrototype(objectPath);
  });

  test("TCP through the NodePort reaches both backends, masqueraded, 100 connections without a failure", async () => {
    const results = await runClient((topo as Topology).client, null, "tcp", NODE_IP, NODE_PORT, 100);
    const answers = results.map((r) => r.answer ?? r.error);
    assert.deepEqual(
      answers.filter((a) => !/^pod-[01] 192\.168\.0\.2$/.test(String(a))),
      [],
    );
    assert.deepEqual([...new Set(answers)].sort(), ["pod-0 192.168.0.2", "pod-1 192.168.0.2"]);
  });

  test("UDP through the NodePort: the answer comes back from the NodePort", async () => {
    const [r] = await runClient((topo as Topology).client, null, "udp-unconnected", NODE_IP, NODE_PORT);
    assert.match(r?.answer ?? String(r?.error), /^pod-[01] 192\.168\.0\.2$/);
    assert.deepEqual(r?.from, [NODE_IP, NODE_PORT]);
  });
});
