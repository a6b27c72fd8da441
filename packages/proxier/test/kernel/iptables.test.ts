// The iptables renderer's output, applied by the real iptables-restore in a network
// namespace, once per backend (legacy x_tables and nf_tables): both endpoints answer, a
// partial sync takes one away, no endpoints means REJECT, NodePorts work, and the cleanup
// used for mode migration leaves no kube-proxy chain behind. Once per family too: iptables over IPv4 and
// ip6tables over the topology's IPv6 twins.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import type { Endpoint } from "kubernetes-types/discovery/v1.js";
import { cleanupIPTablesLeftovers } from "../../src/apply/cleanup.js";
import { inNetns, realExec } from "../../src/apply/exec.js";
import { type IPTablesBackend, IptablesRestoreApplier } from "../../src/apply/iptables-restore.js";
import { type IPTablesState, renderIPTables } from "../../src/iptables/render.js";
import { ensureCanaryChains, ensureJumpChains } from "../../src/iptables/skeleton.js";
import { skeletonRestore } from "../../src/iptables/skeleton-restore.js";
import { ensureIPTablesSkeleton } from "../../src/proxier/iptables-backend.js";
import { buildMaps, iptOptions, makeService, makeSlice } from "../../src/testing/fixtures.js";
import { inFamily, kernelTestsUnavailable, Topology } from "./topology.js";

const NODE_PORT = 30080;
const POD_IPS_V4 = ["10.180.0.1", "10.180.0.2"];

function maps(family: IPFamily, podIPs: readonly string[]) {
  const clusterIP = inFamily(family, "172.30.0.41");
  const svc = makeService("ns1", "svc1", {
    type: "NodePort",
    clusterIP,
    clusterIPs: [clusterIP],
    ipFamilies: [family],
    ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: NODE_PORT }],
  });
  const eps: Endpoint[] = podIPs.map((ip) => ({ addresses: [ip], nodeName: "node1" }));
  return buildMaps(family, [svc], [makeSlice("ns1", "svc1", "a", eps, [{ name: "p80", port: 80 }], family)]);
}

/** Runs the renderer's synchronous jump/canary writers against the async applier, in order. */
async function ensureSkeleton(ipt: IptablesRestoreApplier): Promise<void> {
  const steps: (() => Promise<void>)[] = [];
  const writer = {
    ensureChain: (table: "filter" | "nat" | "mangle", chain: string) =>
      steps.push(() => ipt.ensureChain(table, chain)),
    ensureRule: (
      position: "prepend" | "append",
      table: "filter" | "nat" | "mangle",
      chain: string,
      args: readonly string[],
    ) => steps.push(() => ipt.ensureRule(position, table, chain, args)),
  };
  ensureJumpChains(writer);
  ensureCanaryChains(writer);
  for (const step of steps) await step();
}

for (const [family, backend] of [
  ["IPv4", "legacy"],
  ["IPv4", "nft"],
  ["IPv6", "legacy"],
  ["IPv6", "nft"],
] as const satisfies readonly (readonly [IPFamily, IPTablesBackend])[]) {
  const tool = family === "IPv6" ? "ip6tables" : "iptables";
  const skip = await kernelTestsUnavailable([`${tool}-${backend}-restore`, `${tool}-${backend}-save`]);
  if (skip) console.log(`# skipping ${tool} (${backend}) kernel tests: ${skip}`);
  const CLUSTER_IP = inFamily(family, "172.30.0.41");
  const NODE_ADDRESS = inFamily(family, "192.168.0.2");
  const POD_IPS = POD_IPS_V4.map((ip) => inFamily(family, ip));

  describe(`${tool} rules in the kernel (${backend} backend)`, { skip: skip ?? false }, () => {
    let topo: Topology;
    let ipt: IptablesRestoreApplier;
    let state: IPTablesState | undefined;
    let now = 0;

    async function sync(podIPs: readonly string[], changed?: ReadonlySet<string>): Promise<void> {
      now += 2000;
      const r = renderIPTables(
        iptOptions(family),
        { ...maps(family, podIPs), changedServices: changed, now },
        state,
      );
      if (r.fullSync) await ensureSkeleton(ipt);
      await ipt.restore(r.restore, { noflush: true, counters: true });
      state = r.state;
    }

    before(async () => {
      topo = await Topology.create(
        `sy-ki${backend[0]}${family === "IPv6" ? 6 : 4}${process.pid}`,
        POD_IPS_V4,
      );
      ipt = new IptablesRestoreApplier({ family, backend, exec: topo.nodeExec });
    });
    after(async () => {
      await topo?.destroy();
    });

    test("the batched skeleton (one save per table, one restore) equals kube-proxy's rule-by-rule one", async () => {
      const saveAll = async () => ({
        filter: await ipt.save("filter"),
        nat: await ipt.save("nat"),
        mangle: await ipt.save("mangle"),
      });
      const nat = await ensureIPTablesSkeleton(ipt);
      assert.ok(!nat.includes("KUBE-SERVICES"), "the nat table is returned as it was before");
      const batched = await saveAll();
      assert.ok(
        batched.nat.includes(
          '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        ),
      );
      // Nothing is missing now, and the rule-by-rule way finds nothing to add either.
      assert.equal(skeletonRestore(batched), "");
      await ensureSkeleton(ipt);
      const strip = (t: string) => t.replace(/^#.*$/gm, "").replace(/\[\d+:\d+\]/g, "");
      const after = await saveAll();
      for (const table of ["filter", "nat", "mangle"] as const) {
        assert.equal(strip(after[table]), strip(batched[table]), `${table} changed`);
      }
      // Idempotent: a second batched pass sends nothing.
      await ensureIPTablesSkeleton(ipt);
      assert.equal(strip((await saveAll()).filter), strip(batched.filter));
    });

    test("full sync: the ClusterIP and the NodePort reach both endpoints", async () => {
      await sync(POD_IPS);
      const viaClusterIP = await topo.probe(CLUSTER_IP, 80, 30);
      assert.deepEqual(new Set(viaClusterIP), new Set(["pod-0", "pod-1"]), viaClusterIP.join(","));
      const viaNodePort = await topo.probe(NODE_ADDRESS, NODE_PORT, 30);
      assert.deepEqual(new Set(viaNodePort), new Set(["pod-0", "pod-1"]), viaNodePort.join(","));
      const fromNode = await topo.probe(CLUSTER_IP, 80, 20, { netns: topo.node });
      assert.deepEqual(new Set(fromNode), new Set(["pod-0", "pod-1"]), fromNode.join(","));
    });

    test("partial sync without one endpoint: only the other answers", async () => {
      await sync([POD_IPS[0] ?? ""], new Set(["ns1/svc1"]));
      assert.deepEqual(new Set(await topo.probe(CLUSTER_IP, 80, 15)), new Set(["pod-0"]));
      assert.deepEqual(new Set(await topo.probe(NODE_ADDRESS, NODE_PORT, 10)), new Set(["pod-0"]));
    });

    test("no endpoints: connections are refused", async () => {
      // Over IPv6 each probe takes about a second: the client's TCP treats the ICMPv6 error to its first SYN as
      // soft (it arrives while connect() still holds the socket) and gives up at the retransmitted SYN's; the
      // REJECT answers both at once (seen with tcpdump, 2026-12-02). Over IPv4 the first one ends it.
      await sync([], new Set(["ns1/svc1"]));
      assert.deepEqual(new Set(await topo.probe(CLUSTER_IP, 80, 3)), new Set(["ECONNREFUSED"]));
      assert.deepEqual(new Set(await topo.probe(NODE_ADDRESS, NODE_PORT, 3)), new Set(["ECONNREFUSED"]));
    });

    test("cleanup removes every kube-proxy chain and jump, and keeps kubelet's KUBE-FIREWALL", async () => {
      await sync(POD_IPS, new Set(["ns1/svc1"]));
      // 30 connections, so that both of two random backends answer but once in 2^29 runs (10: once in 512).
      assert.deepEqual(new Set(await topo.probe(CLUSTER_IP, 80, 30)), new Set(["pod-0", "pod-1"]));
      await cleanupIPTablesLeftovers(ipt);
      for (const table of ["nat", "filter", "mangle"] as const) {
        const saved = await ipt.save(table);
        const left = saved.split("\n").filter((l) => /KUBE-/.test(l) && !/KUBE-FIREWALL/.test(l));
        assert.deepEqual(left, [], `${table} still has:\n${left.join("\n")}`);
      }
      const answers = await topo.probe(CLUSTER_IP, 80, 1);
      assert.ok(!answers.includes("pod-0") && !answers.includes("pod-1"), answers.join(","));
      // Running it again finds nothing to do.
      await cleanupIPTablesLeftovers(ipt);
    });
  });
}

// Cleaning up a backend the node does not use must not create its tables: a legacy table appears as soon as
// iptables-legacy is asked about it by name, and iptables-nft then warns on every save that legacy tables exist.
{
  const skip = await kernelTestsUnavailable(["iptables-legacy-restore", "iptables-legacy-save"]);
  describe("cleanup of the unused legacy backend (a node whose rules are in nf_tables)", {
    skip: skip ?? false,
  }, () => {
    const netns = `sy-kcl${process.pid}`;
    const exec = inNetns(netns, realExec);
    const tables = async () =>
      (await exec("cat", ["/proc/net/ip_tables_names"])).stdout.split("\n").filter(Boolean);
    before(async () => {
      const r = await realExec("ip", ["netns", "add", netns]);
      assert.equal(r.code, 0, r.stderr);
    });
    after(async () => {
      await realExec("ip", ["netns", "delete", netns]);
    });

    test("creates no legacy table, where asking for one by name would", async () => {
      const ipt = new IptablesRestoreApplier({ family: "IPv4", backend: "legacy", exec });
      assert.deepEqual(await tables(), [], "a new namespace has no legacy table");
      await cleanupIPTablesLeftovers(ipt);
      await cleanupIPTablesLeftovers(ipt, "ipvs");
      assert.deepEqual(await tables(), []);
      // What the cleanup used to do (save -t <table>) makes the table: the reason for the rule above.
      await ipt.save("nat");
      assert.deepEqual(await tables(), ["nat"]);
    });
  });
}
