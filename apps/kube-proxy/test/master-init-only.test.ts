// The two start-up flags that change where the proxy connects and whether it stays, against the
// lab's real API server and a network namespace: --master wins over a kubeconfig whose server is
// wrong, and --init-only writes the node's sysctls, programs no rules and exits 0. As upstream,
// --init-only still reads the Node first (newProxyServer builds the client and waits for it).
import assert from "node:assert/strict";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import { CLUSTER_CIDR, missingKernelTools, Net, NODE_IP, names, startProxy } from "../src/testing/netns.js";
import { type Api, apiClient, createNode, createService, createSlice } from "./api.js";

const skip = missingKernelTools(["nft", "iptables-nft", "iptables-nft-save"]) ?? missingControlPlane();
const NS = "master";
const CLOSE_WAIT = "net.netfilter.nf_conntrack_tcp_timeout_close_wait";

describe("switchyard-proxy: --master and --init-only", { skip, timeout: 600_000 }, () => {
  let cp: TestControlPlane;
  let api: Api;
  let net: Net;
  let kubeconfig: string;
  let webIP = "";

  before(async () => {
    cp = await startControlPlane();
    api = apiClient(cp.server, cp.stateDir);
    net = new Net(`sym${process.pid % 10000}`, 214);
    await net.build(["10.180.0.1"]);
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

  test("--master replaces a kubeconfig's wrong server; the file's credentials still apply", async () => {
    const text = readFileSync(kubeconfig, "utf8");
    const right = /^\s*server: (\S+)$/m.exec(text)?.[1] ?? assert.fail("no server in the kubeconfig");
    // Nothing listens there: without --master the proxy could not read its Node.
    const wrong = kubeconfig.replace(/kubeconfig$/, "wrong-kubeconfig");
    writeFileSync(wrong, text.replace(right, "https://127.0.0.1:1"));
    const proxy = startProxy(net.node, [
      `--kubeconfig=${wrong}`,
      `--master=${right}`,
      "--proxy-mode=nftables",
      "--hostname-override=node1",
      `--cluster-cidr=${CLUSTER_CIDR}`,
      "--nftables-min-sync-period=100ms",
    ]);
    try {
      await eventually("the ClusterIP to answer", async () => {
        if (proxy.child.exitCode !== null) throw new Error(`proxy exited:\n${proxy.log()}`);
        return names(await net.probe(webIP, 80, 1)).has("pod-0") || undefined;
      }).catch((err: Error) => assert.fail(`${err.message}\n${proxy.log()}`));
      assert.doesNotMatch(proxy.log(), /cannot read this node's object/);
    } finally {
      assert.equal(await proxy.stop(), 0);
      net.in(net.node, ["nft", "flush", "ruleset"]);
    }
  });

  test("--init-only sets the conntrack sysctls, programs nothing, and exits 0", async () => {
    net.in(net.node, ["sysctl", "-qw", `${CLOSE_WAIT}=60`]);
    const started = Date.now();
    const proxy = startProxy(net.node, [
      `--kubeconfig=${kubeconfig}`,
      "--init-only",
      "--proxy-mode=nftables",
      "--hostname-override=node1",
      "--conntrack-tcp-timeout-close-wait=2h",
      // Zero leaves nf_conntrack_max alone: outside the initial namespace it is read-only.
      "--conntrack-max-per-core=0",
    ]);
    if (proxy.child.exitCode === null) await once(proxy.child, "exit");
    const seconds = (Date.now() - started) / 1000;
    assert.equal(proxy.child.exitCode, 0, proxy.log());
    assert.ok(seconds < 30, `took ${seconds}s`);
    assert.equal(net.in(net.node, ["sysctl", "-n", CLOSE_WAIT]).trim(), "7200");
    assert.match(proxy.log(), /System initialized and --init-only specified/);
    assert.doesNotMatch(net.in(net.node, ["nft", "list", "tables"]), /kube-proxy/);
  });
});
