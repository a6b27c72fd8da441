// The proof that our rules are upstream's: the golden cluster is created in a real API
// server, the real kube-proxy v1.37.2 programs a network namespace from it, our renderer's
// output is loaded into a second namespace by the real iptables-restore / nft, and the two
// dumps must match after canonical sorting. Our nftables rules are written by the netlink writer, as the
// proxy writes them. Skipped without root or the upstream binaries.
// IPv4 single-stack here; IPv6 and dual-stack in upstream-diff-dual.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { parseConntrackList } from "../src/conntrack/flow.js";
import { drainedConntrackFlows, staleConntrackFlows } from "../src/conntrack/reconcile.js";
import { renderIPTables } from "../src/iptables/render.js";
import { renderNFTables } from "../src/nftables/render.js";
import type { Transaction } from "../src/nftables/transaction.js";
import { buildMaps, iptOptions, NODE_IP, NODE_NAME, nftOptions } from "../src/testing/fixtures.js";
import { goldenServices, goldenSlices } from "./golden-cluster.js";
import { sortIPTables } from "./ipt-helpers.js";
import { canonicalNFTList } from "./nft-list.js";
import {
  createCluster,
  DiffLab,
  type ProxyMode,
  readCluster,
  report,
  serviceCIDRsFromAPI,
  setEndpoints,
  sortDispatchChains,
} from "./upstream-diff-lab.js";
import * as H from "./upstream-harness.js";

const SERVICE_CIDR = "10.96.0.0/16"; // the lab API server's range
const CLUSTER_CIDR = "10.180.0.0/16";
const clusterIP = (n: number) => `10.96.0.${n}`;
const skip = H.missingUpstream() ?? missingControlPlane();

describe("upstream kube-proxy v1.37.2 diff", { skip, timeout: 300_000 }, () => {
  let cp: TestControlPlane | undefined;
  let lab: DiffLab;
  let api: H.ApiClient;

  before(async () => {
    cp = await startControlPlane();
    lab = new DiffLab(cp);
    api = lab.api;
    await createCluster(api, {
      nodeIPs: [NODE_IP],
      services: goldenServices(clusterIP),
      slices: goldenSlices(),
    });
  });

  after(async () => {
    await lab?.close();
    await cp?.stop();
  });

  /** kube-proxy on the IPv4 cluster; its dump and a way to wait for the next one. */
  async function runRealKubeProxy(
    mode: ProxyMode,
    subnet: number,
    extraArgs: readonly string[] = [],
    label?: string,
  ) {
    const run = await lab.runRealKubeProxy(mode, subnet, {
      clusterCidr: CLUSTER_CIDR,
      extraArgs,
      ...(label ? { label } : {}),
    });
    return { dump: run.dumps.IPv4, next: (text: string) => run.next(text) };
  }
  const loadOursIPTables = (label: string, restore: string, nfacct: boolean) =>
    lab.loadOursIPTables(label, restore, nfacct);
  const loadOursNFT = (label: string, tx: Transaction) => lab.loadOursNFT(label, tx);

  test("iptables mode", async () => {
    const kp = await runRealKubeProxy("iptables", 201);
    const real = kp.dump;
    const { services, slices } = await readCluster(api);
    // nfacct counters exist only when the kernel has nfnetlink_acct; take that from the real run.
    const nfacct = real.includes("--nfacct-name");
    const options = iptOptions("IPv4", {
      localDetector: { mode: "ClusterCIDR", cidr: CLUSTER_CIDR },
      nfacctCounters: { localhostNodePortsAccepted: nfacct, ctStateInvalidDropped: nfacct },
    });
    const result = renderIPTables(options, { ...buildMaps("IPv4", services, slices), now: 0 });

    const ns = loadOursIPTables("ipt", result.restore, nfacct);
    const ours = H.inNetns(ns, ["iptables-save"]);
    report("iptables-save", sortDispatchChains(sortIPTables(real)), sortDispatchChains(sortIPTables(ours)));

    // Partial-sync round: one endpoint of svc1 moves; kube-proxy resyncs only that service,
    // and so do we, from the state of our first sync.
    await setEndpoints(api, "ns1", "svc1-a", { "10.180.0.1": NODE_NAME, "10.180.1.31": "node2" });
    const realAfter = await kp.next("10.180.1.31");
    const after = await readCluster(api);
    const partial = renderIPTables(
      options,
      { ...buildMaps("IPv4", after.services, after.slices), changedServices: new Set(["ns1/svc1"]), now: 1 },
      result.state,
    );
    assert.equal(partial.fullSync, false);
    H.inNetns(ns, ["iptables-restore", "-w", "--noflush", "--counters"], partial.restore);
    const oursAfter = H.inNetns(ns, ["iptables-save"]);
    report(
      "iptables-save after a partial sync",
      sortDispatchChains(sortIPTables(realAfter)),
      sortDispatchChains(sortIPTables(oursAfter)),
    );
  });

  test("nftables mode", async () => {
    const kp = await runRealKubeProxy("nftables", 202);
    const real = kp.dump;
    const { services, slices } = await readCluster(api);
    const serviceCIDRs = await serviceCIDRsFromAPI(api, "IPv4");
    assert.deepEqual(serviceCIDRs, [SERVICE_CIDR]);
    const options = nftOptions("IPv4", {
      localDetector: { mode: "ClusterCIDR", cidr: CLUSTER_CIDR },
      serviceCIDRs,
    });
    const result = renderNFTables(options, { ...buildMaps("IPv4", services, slices), now: 0 });

    const { ns, writer } = await loadOursNFT("nft", result.transaction);
    const ours = H.inNetns(ns, ["nft", "list", "table", "ip", "kube-proxy"]);
    // The only normalisation is order: kube-proxy adds per-service objects in Go map order, and
    // nft lists set elements in hash order; canonicalNFTList sorts both and keeps rule order.
    report("nft list table ip kube-proxy", canonicalNFTList(real), canonicalNFTList(ours));

    // Partial-sync round: svc9 loses two endpoints and gains a local one, so its DNAT map
    // shrinks to an inline DNAT and the hairpin set changes; only svc9 is rewritten.
    await setEndpoints(api, "ns9", "svc9-a", { "10.180.0.39": NODE_NAME });
    const realAfter = await kp.next("10.180.0.39");
    const after = await readCluster(api);
    const partial = renderNFTables(
      options,
      { ...buildMaps("IPv4", after.services, after.slices), changedServices: new Set(["ns9/svc9"]), now: 1 },
      result.state,
    );
    assert.equal(partial.fullSync, false);
    assert.doesNotMatch(partial.transaction.toString(), /ns1\/svc1/);
    await writer.run(partial.transaction);
    const oursAfter = H.inNetns(ns, ["nft", "list", "table", "ip", "kube-proxy"]);
    report(
      "nft list table ip kube-proxy after a partial sync",
      canonicalNFTList(realAfter),
      canonicalNFTList(oursAfter),
    );
  });
  // detect-local by interface: the same cluster with the pod-traffic match on iifname / -i.
  const interfaceModes = [
    {
      label: "br",
      args: ["--detect-local-mode=BridgeInterface", "--pod-bridge-interface=cbr0"],
      detector: { mode: "BridgeInterface", interfaceName: "cbr0" },
      nft: /iifname != "cbr0" .*iifname "cbr0" goto/s,
      ipt: /! -i cbr0 .*-i cbr0 /s,
    },
    {
      label: "pf",
      args: ["--detect-local-mode=InterfaceNamePrefix", "--pod-interface-name-prefix=veth"],
      detector: { mode: "InterfaceNamePrefix", prefix: "veth" },
      nft: /iifname != "veth\*" .*iifname "veth\*" goto/s,
      ipt: /! -i veth\+ .*-i veth\+ /s,
    },
  ] as const;
  for (const [i, m] of interfaceModes.entries()) {
    test(`nftables mode, ${m.args.join(" ")}`, async () => {
      const kp = await runRealKubeProxy("nftables", 203 + i, m.args, `n${m.label}`);
      const { services, slices } = await readCluster(api);
      const options = nftOptions("IPv4", { localDetector: m.detector, serviceCIDRs: [SERVICE_CIDR] });
      const result = renderNFTables(options, { ...buildMaps("IPv4", services, slices), now: 0 });
      const { ns } = await loadOursNFT(`n${m.label}`, result.transaction);
      const ours = H.inNetns(ns, ["nft", "list", "table", "ip", "kube-proxy"]);
      // both detector matches must be there, or the comparison proves nothing about them
      assert.match(kp.dump, m.nft);
      report(`nft list (${m.detector.mode})`, canonicalNFTList(kp.dump), canonicalNFTList(ours));
    });

    test(`iptables mode, ${m.args.join(" ")}`, async () => {
      const kp = await runRealKubeProxy("iptables", 205 + i, m.args, `i${m.label}`);
      const { services, slices } = await readCluster(api);
      const nfacct = kp.dump.includes("--nfacct-name");
      const options = iptOptions("IPv4", {
        localDetector: m.detector,
        nfacctCounters: { localhostNodePortsAccepted: nfacct, ctStateInvalidDropped: nfacct },
      });
      const result = renderIPTables(options, { ...buildMaps("IPv4", services, slices), now: 0 });
      const ns = loadOursIPTables(`i${m.label}`, result.restore, nfacct);
      const ours = H.inNetns(ns, ["iptables-save"]);
      assert.match(kp.dump, m.ipt);
      report(
        `iptables-save (${m.detector.mode})`,
        sortDispatchChains(sortIPTables(kp.dump)),
        sortDispatchChains(sortIPTables(ours)),
      );
    });
  }
  test("UDP conntrack: kube-proxy keeps an answered entry to a terminating endpoint it no longer uses; ours drops it", async () => {
    const kp = await lab.runRealKubeProxy("iptables", 207, { clusterCidr: CLUSTER_CIDR, label: "ct" });
    const client = "10.180.0.99";
    const [local, terminating, gone] = ["10.180.0.39", "10.180.1.9", "10.180.1.77"];
    // An answered DNS exchange from `client` via svc9's ClusterIP that `endpoint` answered, as conntrack keeps it.
    const insert = (sport: number, endpoint: string) =>
      H.inNetns(kp.netns, [
        ...["conntrack", "-I", "-p", "udp", "-s", client, "-d", clusterIP(49), "--sport", String(sport)],
        ...[
          "--dport",
          "53",
          "-r",
          endpoint,
          "-q",
          client,
          "--reply-port-src",
          "53",
          "--reply-port-dst",
          String(sport),
        ],
        ...["-t", "120", "-u", "SEEN_REPLY"],
      ]);
    const answeredBy = () =>
      parseConntrackList(H.inNetns(kp.netns, ["conntrack", "-L", "-p", "udp"]))
        .filter((f) => f.orig.dst === clusterIP(49))
        .map((f) => f.reply.src)
        .sort();
    insert(41001, terminating);
    insert(41002, gone);
    // svc9's 10.180.1.9 turns terminating (still serving) beside a ready local endpoint: a UDP endpoint change, so
    // kube-proxy reconciles, and the entry to an address that is no endpoint at all goes.
    const path = "/apis/discovery.k8s.io/v1/namespaces/ns9/endpointslices/svc9-a";
    const current = (await api.call("GET", path)) as EndpointSlice;
    await api.call("PUT", path, {
      ...current,
      endpoints: [
        { addresses: [local], nodeName: NODE_NAME },
        {
          addresses: [terminating],
          nodeName: "node2",
          conditions: { ready: false, serving: true, terminating: true },
        },
      ],
    });
    for (const deadline = Date.now() + 30_000; answeredBy().includes(gone); ) {
      assert.ok(Date.now() < deadline, "kube-proxy's reconcile did not delete the entry to a non-endpoint");
      await new Promise((r) => setTimeout(r, 250));
    }
    // Upstream's rule: the terminating endpoint still serves, so its entry stays (until it stops serving).
    assert.deepEqual(answeredBy(), [terminating]);
    // Ours, from the same cluster: upstream's rule picks nothing more; the drain picks that entry.
    const { services, slices } = await readCluster(api);
    const m = buildMaps("IPv4", services, slices);
    const flows = parseConntrackList(H.inNetns(kp.netns, ["conntrack", "-L", "-p", "udp"]));
    assert.deepEqual(staleConntrackFlows(flows, m.services, m.endpoints), []);
    assert.deepEqual(
      drainedConntrackFlows(flows, m.services, m.endpoints, NODE_NAME).answered.map((f) => f.reply.src),
      [terminating],
    );
  });
});
