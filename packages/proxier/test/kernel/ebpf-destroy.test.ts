// Ending stale socket-balanced UDP flows for real: the socket programs attached to a cgroup of this test's own, the
// eBPF backend syncing real Services into the kernel's maps, and the socket-destroy iterator run through the
// backend after an endpoint goes. A client inside the cgroup (in the topology's client namespace, which the ender
// finds through the cgroup's processes) holds connected UDP sockets open across the change: the one whose backend
// went fails its next calls (ECONNABORTED, then EDESTADDRREQ: it was disconnected) and a new one reaches the
// remaining backend; one to the same backend through another Service that still has it, one to another backend,
// and one connected to the pod directly (not balanced) stay.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { KernelSocketEnder } from "../../src/apply/bpf-destroy.js";
import { loadSockPrograms, removeSockPrograms } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { realExec } from "../../src/apply/exec.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { EBPFProxyBackend } from "../../src/proxier/ebpf-backend.js";
import { buildMaps, makeService, makeSlice, NODE_NAME } from "../../src/testing/fixtures.js";
import { ebpfTestsUnavailable, ipv6Settled, TestCgroup, testPinRoot } from "./ebpf-fixture.js";
import { SocketClient } from "./socket-client.js";
import { inFamily, Topology } from "./topology.js";

const skip = await ebpfTestsUnavailable();
if (skip) console.log(`# skipping eBPF socket-destroy kernel tests: ${skip}`);

const POD_A = "10.180.0.1";
const POD_B = "10.180.0.2";
const NODE_IP = "192.168.0.2";

/** dns loses pod A; other keeps it; solo has only pod B. All UDP on port 80, where the pods echo their name. */
const CLUSTER_IPS = { dns: "172.30.0.20", other: "172.30.0.21", solo: "172.30.0.22" };

function cluster(family: IPFamily, dnsPods: readonly string[]) {
  const at = (ip: string) => inFamily(family, ip);
  const service = (name: keyof typeof CLUSTER_IPS) =>
    makeService("ns1", name, {
      clusterIP: at(CLUSTER_IPS[name]),
      ipFamilies: [family],
      ports: [{ name: "p", port: 80, protocol: "UDP" }],
    });
  const slice = (name: string, pods: readonly string[]) =>
    makeSlice(
      "ns1",
      name,
      "a",
      pods.map((ip) => ({ addresses: [at(ip)] })),
      [{ name: "p", port: 80, protocol: "UDP" }],
      family,
    );
  return buildMaps(
    family,
    [service("dns"), service("other"), service("solo")],
    [slice("dns", dnsPods), slice("other", [POD_A]), slice("solo", [POD_B])],
  );
}

describe("ending stale socket-balanced UDP flows in the kernel", { skip: skip ?? false }, () => {
  let topo: Topology | undefined;
  let cgroup: TestCgroup | undefined;
  let store: KernelBPFMapStore | undefined;
  let ender: KernelSocketEnder | undefined;
  const pinRoot = testPinRoot("destroy");

  before(async () => {
    topo = await Topology.create(`sy-ebd${process.pid}`, [POD_A, POD_B]);
    for (const family of ["IPv4", "IPv6"] as const) {
      const pods = family === "IPv6" ? "fd00:10:180::/64" : "10.180.0.0/24";
      const via = inFamily(family, NODE_IP);
      const r = await realExec("ip", ["-n", topo.client, "route", "add", pods, "via", via]);
      assert.equal(r.code, 0, r.stderr);
    }
    await ipv6Settled([topo.client, topo.node, ...topo.pods.map((p) => p.netns)]);
    cgroup = new TestCgroup("destroy");
    // Two stale flows per run, so that three take two runs.
    const maxEntries = { services: 256, backends: 256, staleFlows: 2 };
    await loadSockPrograms({ cgroupPath: cgroup.path, pinRoot, maxEntries });
    store = await KernelBPFMapStore.open(pinRoot);
    ender = await KernelSocketEnder.open({ pinRoot, cgroupPath: cgroup.path });
  });

  after(async () => {
    ender?.close();
    store?.close();
    await removeSockPrograms(pinRoot);
    await cgroup?.remove();
    await topo?.destroy();
  });

  for (const family of ["IPv4", "IPv6"] as const) {
    const at = (ip: string) => inFamily(family, ip);

    test(`${family}: the socket whose backend went fails its next call, a new one reaches the other; the rest stay`, async () => {
      const metrics = newProxyMetrics("ebpf");
      const backend = new EBPFProxyBackend({
        options: { family, nodeName: NODE_NAME, nodeLabels: {}, nodePortIPs: [] },
        maps: store as KernelBPFMapStore,
        sockets: ender as KernelSocketEnder,
        metrics,
      });
      const first = cluster(family, [POD_A]);
      await backend.sync({ ...first, now: 0 });
      const client = await SocketClient.start((topo as Topology).client, cgroup as TestCgroup);
      try {
        assert.deepEqual(await client.open("dns", at(CLUSTER_IPS.dns), 80), {
          peer: [at(CLUSTER_IPS.dns), 80],
        });
        await client.open("other", at(CLUSTER_IPS.other), 80);
        await client.open("solo", at(CLUSTER_IPS.solo), 80);
        await client.open("direct", at(POD_A), 80);
        const answers = async () => ({
          dns: await client.ask("dns"),
          other: await client.ask("other"),
          solo: await client.ask("solo"),
          direct: await client.ask("direct"),
        });
        assert.deepEqual(await answers(), {
          dns: { answer: "pod-0" },
          other: { answer: "pod-0" },
          solo: { answer: "pod-1" },
          direct: { answer: "pod-0" },
        });

        // Pod A leaves dns: the maps no longer offer it there, and the stale flow's socket is ended.
        const second = cluster(family, [POD_B]);
        await backend.sync({ ...second, changedServices: new Set(["ns1/dns"]), now: 1 });
        await backend.endStaleFlows(first, second);

        // The error the kernel left on the socket comes first, at once, to a caller waiting for an answer; the
        // socket is disconnected too, so a send without an address fails after it.
        assert.deepEqual(await client.receive("dns"), { error: "ECONNABORTED", at: "recv" });
        const after = await answers();
        assert.deepEqual(after.dns, { error: "EDESTADDRREQ", at: "send" });
        assert.deepEqual(
          { other: after.other, solo: after.solo, direct: after.direct },
          { other: { answer: "pod-0" }, solo: { answer: "pod-1" }, direct: { answer: "pod-0" } },
        );
        await client.open("dns-again", at(CLUSTER_IPS.dns), 80);
        assert.deepEqual(await client.ask("dns-again"), { answer: "pod-1" });
        const counted = await metrics.registry.getSingleMetricAsString(
          "kubeproxy_sync_proxy_rules_bpf_sockets_destroyed_total",
        );
        assert.match(counted, new RegExp(`\\{ip_family="${family}"\\} 1$`, "m"));
      } finally {
        await client.stop();
      }
    });
  }

  test("more flows than lb4_stale_flows holds are ended over several runs", async () => {
    const backend = new EBPFProxyBackend({
      options: { family: "IPv4", nodeName: NODE_NAME, nodeLabels: {}, nodePortIPs: [] },
      maps: store as KernelBPFMapStore,
    });
    await backend.sync({ ...cluster("IPv4", [POD_A]), now: 0 });
    const client = await SocketClient.start((topo as Topology).client, cgroup as TestCgroup);
    try {
      await client.open("dns", CLUSTER_IPS.dns, 80);
      assert.deepEqual(await client.ask("dns"), { answer: "pod-0" });
      const flow = (frontendAddress: string, backendAddress: string) => ({
        frontendAddress,
        frontendPort: 80,
        backendAddress,
        backendPort: 80,
      });
      const nobody = [flow(CLUSTER_IPS.other, POD_B), flow(CLUSTER_IPS.solo, POD_A)];
      const r = (ender as KernelSocketEnder).endSync("IPv4", [...nobody, flow(CLUSTER_IPS.dns, POD_A)]);
      assert.deepEqual(r, {
        ended: 1,
        endedByFlow: [{ flow: flow(CLUSTER_IPS.dns, POD_A), ended: 1 }],
        namespaces: 1,
        errors: [],
      });
      assert.deepEqual(await client.receive("dns"), { error: "ECONNABORTED", at: "recv" });
      assert.deepEqual(
        await (store as KernelBPFMapStore).dump("IPv4", "staleFlows"),
        [],
        "the map is left empty",
      );
    } finally {
      await client.stop();
    }
  });
});
