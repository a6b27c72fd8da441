// loadBalancerSourceRanges through the tc program, for real: LoadBalancer Services rendered by renderEBPF into the
// kernel's maps, one whose ranges hold the client (the topology's outside world) and one whose ranges do not.
// The first answers; the second drops, so the client's 1 s timeout runs out (never a SYN retry waited on beyond
// it). A partial sync then swaps the ranges, and the answers swap with them. The socket programs, attached to a
// cgroup whose client runs in the node's namespace, judge an unbound socket by the node's address: a third
// Service whose ranges hold the node answers it, the one whose ranges hold only the client refuses it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import type { Service } from "kubernetes-types/core/v1.js";
import { loadSockPrograms, removeSockPrograms } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { decodeContents } from "../../src/ebpf/contents.js";
import { type EBPFState, renderEBPF } from "../../src/ebpf/render.js";
import { buildMaps, makeService, makeSlice } from "../../src/testing/fixtures.js";
import { ebpfOptions } from "../ebpf/helpers.js";
import { ipv6Settled, runClient, TestCgroup, testPinRoot } from "./ebpf-fixture.js";
import { loadTcIn, PeerServers, removeTcIn, tcTestsUnavailable } from "./ebpf-tc-fixture.js";
import { CLIENT_IP, inFamily, Topology } from "./topology.js";

const skip = await tcTestsUnavailable();
if (skip) console.log(`# skipping eBPF source range kernel tests: ${skip}`);

const POD = "10.180.0.1";
const NODE_IP = "192.168.0.2";
const TARGET_PORT = 8080;
/** VIPs the client routes to the node (the topology routes 172.30/16 there). */
const VIPS = { open: "172.30.0.100", closed: "172.30.0.101", node: "172.30.0.102" } as const;

/** Ranges holding the client, and ranges that do not, in both families. */
const HOLDS_CLIENT = [`${CLIENT_IP}/32`, `${inFamily("IPv6", CLIENT_IP)}/128`];
const ELSEWHERE = ["203.0.113.0/25", "fd00:203:0:113::/64"];
const HOLDS_NODE = ["192.168.0.0/24", "fd00:192:168::/64"];
const MAX_ENTRIES = { services: 256, backends: 256, revNat: 256, sourceRange: 256 };

function lb(name: keyof typeof VIPS, ranges: string[]): Service {
  const clusterIP = `172.30.0.${{ open: 11, closed: 12, node: 13 }[name]}`;
  return makeService(
    "ns1",
    name,
    {
      type: "LoadBalancer",
      clusterIP,
      ipFamilies: ["IPv4", "IPv6"],
      clusterIPs: [clusterIP, inFamily("IPv6", clusterIP)],
      loadBalancerSourceRanges: ranges,
      ports: [{ name: "p80", port: 80, protocol: "TCP", targetPort: TARGET_PORT }],
    },
    { loadBalancer: { ingress: [{ ip: VIPS[name] }, { ip: inFamily("IPv6", VIPS[name]) }] } },
  );
}

function input(family: IPFamily, openRanges: string[], closedRanges: string[]) {
  const slice = (name: string) =>
    makeSlice(
      "ns1",
      name,
      "a",
      [{ addresses: [inFamily(family, POD)] }],
      [{ name: "p80", port: TARGET_PORT }],
      family,
    );
  return buildMaps(
    family,
    [lb("open", openRanges), lb("closed", closedRanges), lb("node", HOLDS_NODE)],
    [slice("open"), slice("closed"), slice("node")],
  );
}

describe("loadBalancerSourceRanges in the tc and socket programs", { skip: skip ?? false }, () => {
  let topo: Topology | undefined;
  let store: KernelBPFMapStore | undefined;
  let cgroup: TestCgroup | undefined;
  const servers = new PeerServers();
  const pinRoot = testPinRoot("ranges");
  const states: Partial<Record<IPFamily, EBPFState>> = {};

  before(async () => {
    topo = await Topology.create(`sy-ebsr${process.pid}`, [POD]);
    for (const pod of topo.pods) await servers.start(pod.netns, pod.name, TARGET_PORT);
    await ipv6Settled([topo.client, topo.node, ...topo.pods.map((p) => p.netns)]);
    const loaded = await loadTcIn(topo.node, {
      devices: ["eth0"],
      masquerade: { IPv4: NODE_IP, IPv6: inFamily("IPv6", NODE_IP) },
      pinRoot,
      maxEntries: MAX_ENTRIES,
    });
    assert.deepEqual(loaded.devices, { eth0: "attached" });
    cgroup = new TestCgroup("ranges");
    // The same pin root and sizes: the socket programs share the tc program's maps.
    await loadSockPrograms({ cgroupPath: cgroup.path, pinRoot, maxEntries: MAX_ENTRIES });
    store = await KernelBPFMapStore.open(pinRoot);
    for (const family of ["IPv4", "IPv6"] as const) {
      const r = renderEBPF(ebpfOptions(family), input(family, HOLDS_CLIENT, ELSEWHERE));
      await store.write(family, r.steps);
      states[family] = r.state;
    }
  });

  after(async () => {
    store?.close();
    await servers.stop();
    if (topo) await removeTcIn(topo.node, pinRoot).catch(() => {});
    await removeSockPrograms(pinRoot);
    await cgroup?.remove();
    await topo?.destroy();
  });

  const connect = async (host: string) => {
    const [r] = await runClient((topo as Topology).client, null, "tcp", host, 80);
    assert.ok(r, `no result for ${host}`);
    return r;
  };

  for (const family of ["IPv4", "IPv6"] as const) {
    const at = (ip: string) => inFamily(family, ip);

    test(`${family}: the kernel's LPM trie holds each Service's ranges under its reverse NAT index`, async () => {
      const s = store as KernelBPFMapStore;
      const kernel = decodeContents(family, {
        services: await s.dump(family, "services"),
        backends: await s.dump(family, "backends"),
        revNat: await s.dump(family, "revNat"),
        sourceRange: await s.dump(family, "sourceRange"),
      });
      const byFrontend = [...(kernel.sourceRanges ?? [])].map(([index, ranges]) => {
        const r = kernel.revNat.get(index);
        return `${r?.address} ${ranges.join(",")}`;
      });
      const i = family === "IPv4" ? 0 : 1;
      const vipRange = `${at(VIPS.node)}/${family === "IPv4" ? 32 : 128}`;
      assert.deepEqual(byFrontend.sort(), [
        `${at(VIPS.open)} ${HOLDS_CLIENT[i]}`,
        `${at(VIPS.closed)} ${ELSEWHERE[i]}`,
        // Its ranges hold the node's address: its VIP is admitted too (kube-proxy's allowFromNode).
        `${at(VIPS.node)} ${vipRange},${HOLDS_NODE[i]}`,
      ]);
    });

    test(`${family}: a client inside the ranges is answered; outside them its connect is dropped`, async () => {
      const open = await connect(at(VIPS.open));
      assert.equal(open.answer, `pod-0 ${at(NODE_IP)}`);
      const closed = await connect(at(VIPS.closed));
      assert.equal(closed.error, "ETIMEDOUT");
    });

    test(`${family}: a socket of the node, unbound, is judged by the node's address`, async () => {
      const fromNode = (vip: string) =>
        runClient((topo as Topology).node, cgroup as TestCgroup, "tcp", at(vip), 80).then(([r]) => r);
      assert.match((await fromNode(VIPS.node))?.answer ?? "", /^pod-0 /);
      const refused = await fromNode(VIPS.open);
      assert.equal(refused?.error, "ECONNREFUSED");
    });

    test(`${family}: a partial sync that swaps the ranges swaps the answers`, async () => {
      const swapped = renderEBPF(
        ebpfOptions(family),
        { ...input(family, ELSEWHERE, HOLDS_CLIENT), changedServices: new Set(["ns1/open", "ns1/closed"]) },
        states[family],
      );
      const touched = new Set(swapped.steps.map((s) => `${s.op} ${s.map}`));
      assert.deepEqual([...touched].sort(), ["delete sourceRange", "update sourceRange"]);
      await (store as KernelBPFMapStore).write(family, swapped.steps);
      // Batches on an LPM trie depend on the kernel; the store falls back for that map alone.
      console.log(`# ${family}: the source range writes went ${(store as KernelBPFMapStore).writeMethod}`);
      states[family] = swapped.state;
      const closed = await connect(at(VIPS.open));
      assert.equal(closed.error, "ETIMEDOUT");
      assert.equal((await connect(at(VIPS.closed))).answer, `pod-0 ${at(NODE_IP)}`);
    });
  }
});
