// Socket-level load balancing for real: the programs attached to a cgroup of this test's own, map entries written
// with the codecs through the kernel map store, and clients (python3) started inside that cgroup in the
// topology's client namespace. The pods' servers answer with their pod's name, so each answer says which backend
// the program chose; a process outside the cgroup is the control (the programs must not touch it).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { loadSockPrograms, removeSockPrograms } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { realExec } from "../../src/apply/exec.js";
import { decodeStruct } from "../../src/ebpf/codec.js";
import {
  affinityValue,
  reverseSockKey,
  reverseSockValue,
  SCOPE_EXTERNAL,
  SCOPE_INTERNAL,
  serviceFlags,
} from "../../src/ebpf/layout.js";
import type { MapWriteStep } from "../../src/ebpf/map-store.js";
import {
  ebpfTestsUnavailable,
  ipv6Settled,
  runClient,
  serviceSteps,
  TestCgroup,
  type TestService,
  testPinRoot,
} from "./ebpf-fixture.js";
import { inFamily, Topology } from "./topology.js";

const skip = await ebpfTestsUnavailable();
if (skip) console.log(`# skipping eBPF traffic kernel tests: ${skip}`);

const POD_A = "10.180.0.1";
const POD_B = "10.180.0.2";
const NODE_IP = "192.168.0.2";
const PODS: Record<string, string> = { "pod-0": POD_A, "pod-1": POD_B };

/** Frontends of the test, as ClusterIPs 172.30.0.N (and their IPv6 twins), each with its own reverse NAT index. */
const FRONTENDS = {
  tcp: { clusterIP: "172.30.0.10", revNat: 1 },
  udp: { clusterIP: "172.30.0.11", revNat: 2 },
  rejected: { clusterIP: "172.30.0.12", revNat: 3 },
  affine: { clusterIP: "172.30.0.13", revNat: 4 },
  nodePort: { clusterIP: NODE_IP, revNat: 5 },
  rejectedUdp: { clusterIP: "172.30.0.14", revNat: 6 },
  /** Two scopes: from outside REJECT, from the node's sockets pod-1 only (TCP and UDP, one address). */
  twoScopes: { clusterIP: "172.30.0.15", revNat: 7 },
  twoScopesUdp: { clusterIP: "172.30.0.15", revNat: 8 },
};
const NODE_PORT = 30080;

/**
 * A frontend whose scopes differ: the internal scope (pod-1 only) written first, then the external slot 0 that
 * refuses traffic from outside and, by its TWO_SCOPES flag, sends the node's sockets to the internal scope.
 */
function twoScopeSteps(family: IPFamily, proto: "TCP" | "UDP"): MapWriteStep[] {
  const base = family === "IPv6" ? 100 : 0;
  const f = proto === "TCP" ? FRONTENDS.twoScopes : FRONTENDS.twoScopesUdp;
  const svc: TestService = {
    family,
    address: inFamily(family, f.clusterIP),
    port: 80,
    proto,
    revNatIndex: base + f.revNat,
    backends: [{ id: base + 2, address: inFamily(family, POD_B), port: 80 }],
  };
  const external = { ...svc, backends: [], flags: serviceFlags.REJECT | serviceFlags.TWO_SCOPES };
  return [...serviceSteps(svc, SCOPE_INTERNAL), ...serviceSteps(external, SCOPE_EXTERNAL)];
}

function services(family: IPFamily): TestService[] {
  const at = (ip: string) => inFamily(family, ip);
  const base = family === "IPv6" ? 100 : 0;
  const both = [
    { id: base + 1, address: at(POD_A), port: 80 },
    { id: base + 2, address: at(POD_B), port: 80 },
  ];
  const svc = (f: { clusterIP: string; revNat: number }, rest: Partial<TestService>): TestService => ({
    family,
    address: at(f.clusterIP),
    port: 80,
    proto: "TCP",
    revNatIndex: base + f.revNat,
    backends: both,
    ...rest,
  });
  return [
    svc(FRONTENDS.tcp, {}),
    svc(FRONTENDS.udp, { proto: "UDP" }),
    svc(FRONTENDS.rejected, { flags: serviceFlags.REJECT, backends: [] }),
    svc(FRONTENDS.rejectedUdp, { proto: "UDP", flags: serviceFlags.REJECT, backends: [] }),
    svc(FRONTENDS.affine, { flags: serviceFlags.AFFINITY, affinityTimeout: 600 }),
    svc(FRONTENDS.nodePort, { port: NODE_PORT, flags: serviceFlags.NODE_PORT }),
  ];
}

describe("socket load balancing in the kernel", { skip: skip ?? false }, () => {
  let topo: Topology | undefined;
  let cgroup: TestCgroup | undefined;
  let store: KernelBPFMapStore | undefined;
  const pinRoot = testPinRoot("traffic");

  before(async () => {
    topo = await Topology.create(`sy-ebt${process.pid}`, [POD_A, POD_B]);
    // The programs send the client straight to the pods: it needs a route to them (via the node).
    for (const family of ["IPv4", "IPv6"] as const) {
      const pods = family === "IPv6" ? "fd00:10:180::/64" : "10.180.0.0/24";
      const r = await realExec("ip", [
        "-n",
        topo.client,
        "route",
        "add",
        pods,
        "via",
        inFamily(family, NODE_IP),
      ]);
      assert.equal(r.code, 0, r.stderr);
    }
    await ipv6Settled([topo.client, topo.node, ...topo.pods.map((p) => p.netns)]);
    cgroup = new TestCgroup("traffic");
    await loadSockPrograms({
      cgroupPath: cgroup.path,
      pinRoot,
      maxEntries: { services: 256, backends: 256 },
    });
    store = await KernelBPFMapStore.open(pinRoot);
    for (const family of ["IPv4", "IPv6"] as const) {
      for (const svc of services(family)) await store.write(family, serviceSteps(svc));
      for (const proto of ["TCP", "UDP"] as const) await store.write(family, twoScopeSteps(family, proto));
    }
  });

  after(async () => {
    store?.close();
    await removeSockPrograms(pinRoot);
    await cgroup?.remove();
    await topo?.destroy();
  });

  const client = (mode: Parameters<typeof runClient>[2], host: string, port = 80, count = 1) =>
    runClient((topo as Topology).client, cgroup as TestCgroup, mode, host, port, count);

  for (const family of ["IPv4", "IPv6"] as const) {
    const at = (ip: string) => inFamily(family, ip);

    test(`${family}: TCP to a ClusterIP reaches a backend, and over 40 connects both`, async () => {
      const results = await client("tcp", at(FRONTENDS.tcp.clusterIP), 80, 40);
      const answers = new Set(results.map((r) => r.answer ?? r.error));
      assert.deepEqual([...answers].sort(), ["pod-0", "pod-1"]);
      // TCP sockets are not remembered: getpeername shows the backend that answered (as Cilium's does).
      for (const r of results) assert.deepEqual(r.peer, [at(PODS[r.answer ?? ""] ?? "?"), 80]);
    });

    test(`${family}: connected UDP reaches a backend, and getpeername shows the ClusterIP`, async () => {
      const [r] = await client("udp-connected", at(FRONTENDS.udp.clusterIP));
      assert.match(r?.answer ?? String(r?.error), /^pod-[01]$/);
      assert.deepEqual(r?.peer, [at(FRONTENDS.udp.clusterIP), 80]);
    });

    test(`${family}: unconnected UDP's replies come from the ClusterIP, as the application sees them`, async () => {
      const results = await client("udp-unconnected", at(FRONTENDS.udp.clusterIP), 80, 4);
      for (const r of results) {
        assert.match(r.answer ?? String(r.error), /^pod-[01]$/);
        assert.deepEqual(r.from, [at(FRONTENDS.udp.clusterIP), 80]);
      }
      // The programs remembered each socket's frontend, keyed by its backend.
      const remembered = (await (store as KernelBPFMapStore).dump(family, "reverseSock")).map(([k, v]) => ({
        key: decodeStruct(reverseSockKey, family, k),
        value: decodeStruct(reverseSockValue, family, v),
      }));
      const toUdp = remembered.filter((e) => e.value.address === at(FRONTENDS.udp.clusterIP));
      assert.ok(toUdp.length >= 4, `${toUdp.length} reverse entries for ${at(FRONTENDS.udp.clusterIP)}`);
      for (const e of toUdp) {
        assert.ok([at(POD_A), at(POD_B)].includes(e.key.address));
        assert.equal(e.value.port, 80);
        assert.equal(e.value.revNatIndex, (family === "IPv6" ? 100 : 0) + FRONTENDS.udp.revNat);
      }
    });

    test(`${family}: a service with REJECT fails at once with ECONNREFUSED, connect and sendto alike`, async () => {
      const [tcp] = await client("tcp", at(FRONTENDS.rejected.clusterIP));
      assert.equal(tcp?.error, "ECONNREFUSED");
      assert.ok((tcp?.ms ?? Infinity) < 200, `took ${tcp?.ms} ms`);
      const [udp] = await client("udp-unconnected", at(FRONTENDS.rejectedUdp.clusterIP));
      assert.equal(udp?.error, "ECONNREFUSED");
    });

    test(`${family}: a NodePort frontend keyed by the node's address is balanced; outside the cgroup it is not`, async () => {
      const results = await client("tcp", at(NODE_IP), NODE_PORT, 6);
      for (const r of results) assert.match(r.answer ?? String(r.error), /^pod-[01]$/);
      // The control: nothing listens on the node's port itself, so the node resets an unbalanced connect.
      const [outside] = await runClient((topo as Topology).client, null, "tcp", at(NODE_IP), NODE_PORT);
      assert.equal(outside?.error, "ECONNREFUSED");
    });

    test(`${family}: a frontend flagged TWO_SCOPES is balanced over its internal scope, TCP and UDP`, async () => {
      const address = at(FRONTENDS.twoScopes.clusterIP);
      const tcp = await client("tcp", address, 80, 6);
      assert.deepEqual(
        tcp.map((r) => r.answer ?? r.error),
        Array(6).fill("pod-1"),
      );
      // recvmsg finds the frontend through the same two lookups: the reply shows the ClusterIP.
      const udp = await client("udp-unconnected", address, 80, 2);
      for (const r of udp) {
        assert.equal(r.answer ?? r.error, "pod-1");
        assert.deepEqual(r.from, [address, 80]);
      }
    });

    test(`${family}: ClientIP affinity keeps one backend, and remembers it per client namespace`, async () => {
      const results = await client("tcp", at(FRONTENDS.affine.clusterIP), 80, 20);
      const answers = new Set(results.map((r) => r.answer ?? r.error));
      assert.equal(answers.size, 1, `answers: ${[...answers].join(", ")}`);
      const [only] = answers;
      assert.match(String(only), /^pod-[01]$/);
      const entries = await (store as KernelBPFMapStore).dump(family, "affinity");
      assert.equal(entries.length, 1);
      const chosen = decodeStruct(affinityValue, family, (entries[0] as [Buffer, Buffer])[1]);
      const base = family === "IPv6" ? 100 : 0;
      assert.equal(chosen.backendId, base + (only === "pod-0" ? 1 : 2));
    });
  }
});
