// The upstream diff (upstream-diff.test.ts) in IPv6 and dual-stack: the golden cluster made
// dual-stack (golden-dual.ts) in an API server with a service range per family, a node with an
// address of each, and the real kube-proxy v1.37.2 running both families' proxiers. Each family's
// dump (iptables-save and ip6tables-save; nft's ip and ip6 kube-proxy tables) must match what our
// renderer makes from that family's maps, first in full, then after a partial sync in IPv6.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import { renderIPTables } from "../src/iptables/render.js";
import { renderNFTables } from "../src/nftables/render.js";
import { buildMaps, iptOptions, NODE_IP, NODE_IPV6, NODE_NAME, nftOptions } from "../src/testing/fixtures.js";
import { dualServices, dualSlices, twin } from "./golden-dual.js";
import { sortIPTables } from "./ipt-helpers.js";
import { canonicalNFTList } from "./nft-list.js";
import * as L from "./upstream-diff-lab.js";
import * as H from "./upstream-harness.js";

const SERVICE_CIDRS = { IPv4: "10.96.0.0/16", IPv6: "fd00:10:96::/112" };
const CLUSTER_CIDRS = { IPv4: "10.180.0.0/16", IPv6: "fd00:10:180::/48" };
const families: IPFamily[] = ["IPv4", "IPv6"];
const clusterIP = (n: number) => `10.96.0.${n}`;
const clusterIP6 = (n: number) => `fd00:10:96::${n}`;
const skip = H.missingUpstream() ?? missingControlPlane();

const detector = (family: IPFamily) => ({ mode: "ClusterCIDR" as const, cidr: CLUSTER_CIDRS[family] });

describe("upstream kube-proxy v1.37.2 diff, IPv6 and dual-stack", { skip, timeout: 300_000 }, () => {
  let cp: TestControlPlane | undefined;
  let lab: L.DiffLab;
  let api: H.ApiClient;

  before(async () => {
    cp = await startControlPlane({ serviceCidr: `${SERVICE_CIDRS.IPv4},${SERVICE_CIDRS.IPv6}` });
    lab = new L.DiffLab(cp);
    api = lab.api;
    await L.createCluster(api, {
      nodeIPs: [NODE_IP, NODE_IPV6],
      services: dualServices(clusterIP, clusterIP6),
      slices: dualSlices(),
    });
  });

  after(async () => {
    await lab?.close();
    await cp?.stop();
  });

  const runDual = (mode: "iptables" | "nftables", subnet: number) =>
    lab.runRealKubeProxy(mode, subnet, {
      clusterCidr: `${CLUSTER_CIDRS.IPv4},${CLUSTER_CIDRS.IPv6}`,
      nodeIPv6: NODE_IPV6,
      families,
    });

  test("the cluster is dual-stack: Services with a ClusterIP per family, one of each single-stack", async () => {
    const { services, slices } = await L.readCluster(api);
    const ours = services.filter((s) => s.metadata?.namespace?.startsWith("ns"));
    const byPolicy = (p: string) => ours.filter((s) => s.spec?.ipFamilyPolicy === p).length;
    assert.equal(byPolicy("RequireDualStack"), 7);
    assert.equal(byPolicy("SingleStack"), 2);
    for (const s of ours.filter((x) => x.spec?.ipFamilyPolicy === "RequireDualStack"))
      assert.deepEqual(s.spec?.ipFamilies, ["IPv4", "IPv6"]);
    assert.ok(slices.some((s) => s.addressType === "IPv6"));
  });

  test("iptables mode: iptables-save and ip6tables-save", async () => {
    const kp = await runDual("iptables", 208);
    const { services, slices } = await L.readCluster(api);
    const rendered = families.map((family) => {
      // nfacct counters exist only when the kernel has nfnetlink_acct; take that from the real run.
      const nfacct = kp.dumps[family].includes("--nfacct-name");
      const options = iptOptions(family, {
        localDetector: detector(family),
        nfacctCounters: { localhostNodePortsAccepted: nfacct, ctStateInvalidDropped: nfacct },
      });
      const result = renderIPTables(options, { ...buildMaps(family, services, slices), now: 0 });
      const ns = lab.loadOursIPTables(`d${family === "IPv4" ? 4 : 6}`, result.restore, nfacct, family);
      const ours = H.inNetns(ns, L.dumpCommand("iptables", family));
      const save = L.dumpCommand("iptables", family).join(" ");
      L.report(
        save,
        L.sortDispatchChains(sortIPTables(kp.dumps[family])),
        L.sortDispatchChains(sortIPTables(ours)),
      );
      return { options, result, ns };
    });
    // Both families were programmed, each with its own addresses only.
    assert.match(kp.dumps.IPv6, new RegExp(`-d ${clusterIP6(49)}/128 .*ns9/svc9:dns cluster IP`));
    assert.doesNotMatch(kp.dumps.IPv6, /10\.96\.0\./);
    assert.doesNotMatch(kp.dumps.IPv4, /fd00:10:96::/);

    // Partial sync in IPv6: one endpoint of svc1's IPv6 slice moves.
    const moved = twin("10.180.1.31");
    await L.setEndpoints(api, "ns1", "svc1-a6", { [twin("10.180.0.1")]: NODE_NAME, [moved]: "node2" });
    const realAfter = await kp.next(moved, "IPv6");
    const after = await L.readCluster(api);
    const [, v6] = rendered;
    assert.ok(v6);
    const partial = renderIPTables(
      v6.options,
      { ...buildMaps("IPv6", after.services, after.slices), changedServices: new Set(["ns1/svc1"]), now: 1 },
      v6.result.state,
    );
    assert.equal(partial.fullSync, false);
    H.inNetns(v6.ns, ["ip6tables-restore", "-w", "--noflush", "--counters"], partial.restore);
    L.report(
      "ip6tables-save after a partial sync",
      L.sortDispatchChains(sortIPTables(realAfter)),
      L.sortDispatchChains(sortIPTables(H.inNetns(v6.ns, ["ip6tables-save"]))),
    );
  });

  test("nftables mode: the ip and ip6 kube-proxy tables", async () => {
    const kp = await runDual("nftables", 209);
    const { services, slices } = await L.readCluster(api);
    const rendered = [];
    for (const family of families) {
      const serviceCIDRs = await L.serviceCIDRsFromAPI(api, family);
      assert.deepEqual(serviceCIDRs, [SERVICE_CIDRS[family]]);
      const options = nftOptions(family, { localDetector: detector(family), serviceCIDRs });
      const result = renderNFTables(options, { ...buildMaps(family, services, slices), now: 0 });
      const { ns, writer } = await lab.loadOursNFT(`n${family === "IPv4" ? 4 : 6}`, result.transaction);
      const list = L.dumpCommand("nftables", family);
      L.report(list.join(" "), canonicalNFTList(kp.dumps[family]), canonicalNFTList(H.inNetns(ns, list)));
      rendered.push({ options, result, ns, writer });
    }
    assert.match(kp.dumps.IPv6, /table ip6 kube-proxy/);
    assert.match(kp.dumps.IPv6, new RegExp(`${clusterIP6(49)} \\. udp \\. 53 : goto service-`));

    // Partial sync in IPv6: svc9's IPv6 slice shrinks to one local endpoint.
    const local = twin("10.180.0.39");
    await L.setEndpoints(api, "ns9", "svc9-a6", { [local]: NODE_NAME });
    const realAfter = await kp.next(local, "IPv6");
    const after = await L.readCluster(api);
    const [, v6] = rendered;
    assert.ok(v6);
    const partial = renderNFTables(
      v6.options,
      { ...buildMaps("IPv6", after.services, after.slices), changedServices: new Set(["ns9/svc9"]), now: 1 },
      v6.result.state,
    );
    assert.equal(partial.fullSync, false);
    await v6.writer.run(partial.transaction);
    L.report(
      "nft list table ip6 kube-proxy after a partial sync",
      canonicalNFTList(realAfter),
      canonicalNFTList(H.inNetns(v6.ns, L.dumpCommand("nftables", "IPv6"))),
    );
  });
});
