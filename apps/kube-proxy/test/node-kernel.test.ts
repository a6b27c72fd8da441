// switchyard-proxy against a real API server and the real kernel, for what it does to the
// node beyond rules: the ServiceCIDR drop rule in nftables mode (the lab's kube-apiserver
// v1.37.2 creates the default "kubernetes" ServiceCIDR), and the start-up sysctls, which
// on this kernel are per network namespace except nf_conntrack_max (read-only outside the
// initial namespace) and the conntrack hash size (a module parameter, global: never written
// here, since the host's is already large enough).
import assert from "node:assert/strict";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import { CLUSTER_CIDR, missingKernelTools, Net, NODE_IP, names, startProxy } from "../src/testing/netns.js";
import { type Api, apiClient, createNode, createService, createSlice } from "./api.js";

const skip =
  missingKernelTools(["nft", "iptables-nft", "iptables-nft-save", "unshare", "mount"]) ??
  missingControlPlane();
const NS = "kernel";
// Not adjacent to 10.96.0.0/16: nft would list two touching ranges as one merged interval.
const SECOND_CIDR = "10.99.0.0/24";
/** Inside the lab's service range (10.96.0.0/16) but no Service's. */
const UNALLOCATED = "10.96.250.250";
/** Inside SECOND_CIDR once that exists. */
const OUTSIDE = "10.99.0.5";

/** Runs its arguments with /proc/sys mounted read-only, as in a container without privileges. */
const READ_ONLY_PROC_SYS = [
  "unshare",
  "-m",
  "sh",
  "-c",
  'mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && exec "$@"',
  "ro-proc-sys",
];

describe("switchyard-proxy: ServiceCIDRs and node sysctls", { skip, timeout: 600_000 }, () => {
  let cp: TestControlPlane;
  let api: Api;
  let net: Net;
  let kubeconfig: string;
  let webIP = "";
  const sysctl = (key: string) => net.in(net.node, ["sysctl", "-n", key]).trim();

  before(async () => {
    cp = await startControlPlane();
    api = apiClient(cp.server, cp.stateDir);
    net = new Net(`syk${process.pid % 10000}`, 217);
    await net.build(["10.180.0.1"]);
    // Hosts the node forwards to: inside the default ServiceCIDR, and inside the second one.
    net.in(net.client, ["ip", "route", "add", "10.99.0.0/16", "via", NODE_IP]);
    await net.addHost("unallocated", UNALLOCATED);
    await net.addHost("outside", OUTSIDE);
    kubeconfig = await net.kubeconfigFor(cp.kubeconfigPath, cp.server);
    await createNode(api, "node1", NODE_IP);
    await api.call("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    const web = await createService(api, NS, "web", { ports: [{ name: "http", port: 80, protocol: "TCP" }] });
    webIP = web.spec?.clusterIP ?? "";
    await createSlice(api, NS, "web", { "10.180.0.1": "node1" });
  });

  after(async () => {
    await net?.destroy();
    await cp?.stop();
  });

  test("nftables: unallocated ClusterIPs inside the ServiceCIDRs are dropped, a new ServiceCIDR at once", async (t) => {
    const kubernetes = await api.call<{ spec: { cidrs: string[] } }>(
      "GET",
      "/apis/networking.k8s.io/v1/servicecidrs/kubernetes",
    );
    const v4 = kubernetes.spec.cidrs.find((c) => !c.includes(":")) ?? "";
    assert.equal(v4, "10.96.0.0/16", "the lab's service range");
    const proxy = startProxy(net.node, [
      `--kubeconfig=${kubeconfig}`,
      "--proxy-mode=nftables",
      "--hostname-override=node1",
      `--cluster-cidr=${CLUSTER_CIDR}`,
      "--nftables-min-sync-period=100ms",
    ]);
    try {
      await eventually("the ClusterIP to answer", async () => {
        if (proxy.child.exitCode !== null) throw new Error(`proxy exited:\n${proxy.log()}`);
        return names(await net.probe(webIP, 80, 1)).has("pod-0") || undefined;
      });
      net.forgetUnansweredFlows(webIP);
      const check = () => net.in(net.node, ["nft", "list", "chain", "ip", "kube-proxy", "cluster-ips-check"]);
      await t.test("the default ServiceCIDR: allocated answers, unallocated is dropped", async () => {
        // The ServiceCIDR informer may deliver after the first sync (the ClusterIP answers then already); the
        // change it brings is synced at once, which is what is waited for here.
        const dropRule = /ip daddr 10\.96\.0\.0\/16 drop comment "Drop traffic to unallocated ClusterIPs"/;
        await eventually("the drop rule for the default ServiceCIDR", async () =>
          dropRule.test(check()) ? true : undefined,
        ).catch((err: Error) => assert.fail(`${err.message}\n${check()}\n${proxy.log()}`));
        assert.deepEqual(names(await net.probe(webIP, 80, 3)), new Set(["pod-0"]));
        // The node would forward it to the host that has it; the drop rule stops it first.
        assert.deepEqual(await net.probe(UNALLOCATED, 80, 2), ["ETIMEDOUT", "ETIMEDOUT"]);
        // Outside every ServiceCIDR the same kind of host answers.
        assert.deepEqual(names(await net.probe(OUTSIDE, 80, 2)), new Set(["outside"]));
      });
      await t.test(
        "a second ServiceCIDR is in the table without waiting for an hourly full sync",
        async () => {
          await api.call("POST", "/apis/networking.k8s.io/v1/servicecidrs", {
            metadata: { name: "second" },
            spec: { cidrs: [SECOND_CIDR] },
          });
          const text = await eventually("the second CIDR in the table", async () => {
            const table = net.in(net.node, ["nft", "list", "table", "ip", "kube-proxy"]);
            return table.includes(SECOND_CIDR) ? table : undefined;
          }).catch((err: Error) => assert.fail(`${err.message}\n${proxy.log()}`));
          assert.match(text, /ip daddr \{ 10\.96\.0\.0\/16, 10\.99\.0\.0\/24 \} drop/);
          assert.deepEqual(await net.probe(OUTSIDE, 80, 1), ["ETIMEDOUT"]);
          assert.deepEqual(names(await net.probe(webIP, 80, 3)), new Set(["pod-0"]));
          await api.call("DELETE", "/apis/networking.k8s.io/v1/servicecidrs/second");
          await eventually("the second CIDR to leave", async () =>
            check().includes("10.99.") ? undefined : true,
          );
          assert.deepEqual(names(await net.probe(OUTSIDE, 80, 2)), new Set(["outside"]));
        },
      );
    } finally {
      assert.equal(await proxy.stop(), 0, proxy.log());
    }
  });

  test("iptables: conntrack settings and route_localnet are written; tcpBeLiberal drops no INVALID packets", async () => {
    net.in(net.node, ["iptables-nft", "-t", "mangle", "-N", "KUBE-IPTABLES-HINT"]);
    net.in(net.node, ["sysctl", "-qw", "net.ipv4.conf.all.route_localnet=0"]);
    const proxy = startProxy(net.node, [
      `--kubeconfig=${kubeconfig}`,
      "--proxy-mode=iptables",
      "--hostname-override=node1",
      `--cluster-cidr=${CLUSTER_CIDR}`,
      "--conntrack-tcp-timeout-established=2h",
      "--conntrack-tcp-timeout-close-wait=30m",
      "--conntrack-udp-timeout=45s",
      "--conntrack-udp-timeout-stream=3m",
      "--conntrack-tcp-be-liberal",
    ]);
    try {
      // The nftables rules of the test before still answer: wait for iptables' own.
      await eventually("the iptables rules", async () => {
        if (proxy.child.exitCode !== null) throw new Error(`proxy exited:\n${proxy.log()}`);
        return net.in(net.node, ["iptables-nft-save", "-t", "nat"]).includes("KUBE-SVC-") || undefined;
      });
      assert.deepEqual(names(await net.probe(webIP, 80, 3)), new Set(["pod-0"]));
      assert.equal(sysctl("net.netfilter.nf_conntrack_tcp_timeout_established"), "7200");
      assert.equal(sysctl("net.netfilter.nf_conntrack_tcp_timeout_close_wait"), "1800");
      assert.equal(sysctl("net.netfilter.nf_conntrack_udp_timeout"), "45");
      assert.equal(sysctl("net.netfilter.nf_conntrack_udp_timeout_stream"), "180");
      assert.equal(sysctl("net.netfilter.nf_conntrack_tcp_be_liberal"), "1");
      assert.equal(sysctl("net.ipv4.conf.all.route_localnet"), "1");
      assert.match(proxy.log(), /Setting route_localnet=1 to allow node-ports on localhost/);
      const filter = net.in(net.node, ["iptables-nft-save", "-t", "filter"]);
      assert.match(filter, /KUBE-SERVICES/);
      assert.doesNotMatch(filter, /ctstate INVALID -j DROP/);
    } finally {
      assert.equal(await proxy.stop(), 0, proxy.log());
      net.in(net.node, ["iptables-nft", "-t", "mangle", "-X", "KUBE-IPTABLES-HINT"]);
    }
  });

  test("a read-only /proc/sys: start-up stops with one line only when something must change", async () => {
    const args = [
      `--kubeconfig=${kubeconfig}`,
      "--proxy-mode=nftables",
      "--hostname-override=node1",
      `--cluster-cidr=${CLUSTER_CIDR}`,
    ];
    // The default (24h) must be written over 7200, and cannot be.
    net.in(net.node, ["sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_timeout_established=7200"]);
    net.in(net.node, ["sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_timeout_close_wait=1800"]);
    const refused = startProxy(net.node, args, {}, READ_ONLY_PROC_SYS);
    const [code] = await once(refused.child, "exit");
    assert.equal(code, 1, refused.log());
    const lines = refused.log().trim().split("\n");
    assert.match(
      lines.at(-1) ?? "",
      /^switchyard-proxy: could not set conntrack parameters from kube-proxy configuration: can't set net\.netfilter\.nf_conntrack_tcp_timeout_established to 86400 \(read-only file system\)/,
    );
    // With values that are already right nothing is written, and it runs.
    const fine = startProxy(
      net.node,
      [...args, "--conntrack-tcp-timeout-established=2h", "--conntrack-tcp-timeout-close-wait=30m"],
      {},
      READ_ONLY_PROC_SYS,
    );
    try {
      // Its own first sync, not the earlier tests' iptables rules (which it removes only after that sync).
      await eventually("the ClusterIP to answer through this proxy's rules", async () => {
        if (fine.child.exitCode !== null) throw new Error(`proxy exited:\n${fine.log()}`);
        if (!fine.log().includes("after the first sync")) return undefined;
        return names(await net.probe(webIP, 80, 1)).has("pod-0") || undefined;
      });
    } finally {
      assert.equal(await fine.stop(), 0, fine.log());
    }
  });

  test("nf_conntrack_max cannot be raised outside the initial network namespace: upstream's failure", async () => {
    const current = Number(sysctl("net.netfilter.nf_conntrack_max"));
    const perCore = current; // × 2 or more CPUs is above the current limit
    const proxy = startProxy(net.node, [
      `--kubeconfig=${kubeconfig}`,
      "--proxy-mode=nftables",
      "--hostname-override=node1",
      `--conntrack-max-per-core=${perCore}`,
      "--conntrack-tcp-timeout-established=2h",
      "--conntrack-tcp-timeout-close-wait=30m",
    ]);
    const [code] = await once(proxy.child, "exit");
    assert.equal(code, 1, proxy.log());
    assert.match(proxy.log(), /can't set net\.netfilter\.nf_conntrack_max to \d+: EACCES: permission denied/);
    assert.equal(sysctl("net.netfilter.nf_conntrack_max"), String(current));
  });
});
