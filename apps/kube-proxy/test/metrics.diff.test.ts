// The metrics a Prometheus user scrapes, compared with kube-proxy v1.37.2's own binary: both run in turn on the
// same node namespace against the same API objects (a Service, its slice), in the same mode, and every kubeproxy_*
// family upstream exposes must be exposed by ours with the same HELP and TYPE lines.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/lab/testing";
import { type Api, apiClient, createNode, createService, createSlice } from "./api.js";
import { CLUSTER_CIDR, missingKernelTools, Net, NODE_IP, startProxy } from "./netns.js";

const UPSTREAM = join(process.env.HOME ?? "/root", ".cache", "switchyard", "v1.37.2", "bin", "kube-proxy");
const skip =
  missingKernelTools(["nft", "iptables-nft-save"]) ??
  missingControlPlane() ??
  (existsSync(UPSTREAM) ? undefined : `no upstream kube-proxy at ${UPSTREAM}`);

/**
 * Two families are left out, with the reason: upstream's iptables mode counts packets through nfacct objects (its
 * rules match `-m nfacct`, and a collector reads the counters on each scrape); ours has no nfacct counters yet, so
 * kubeproxy_iptables_ct_state_invalid_dropped_packets_total and ..._localhost_nodeports_accepted_packets_total
 * are missing. Everything else must be there, HELP (stability level included) and TYPE alike.
 */
const notYet =
  /^# (HELP|TYPE) kubeproxy_iptables_(ct_state_invalid_dropped|localhost_nodeports_accepted)_packets_total /;

/** `# HELP` and `# TYPE` lines of the kubeproxy_* families, sorted. */
const families = (text: string) =>
  text
    .split("\n")
    .filter((l) => /^# (HELP|TYPE) kubeproxy_/.test(l) && !notYet.test(l))
    .sort();

for (const mode of ["iptables", "nftables"] as const)
  describe(`kube-proxy metrics in ${mode} mode, against upstream v1.37.2`, { skip, timeout: 300_000 }, () => {
    let cp: TestControlPlane;
    let api: Api;
    let net: Net;
    let args: string[];
    const scrape = () =>
      net.in(net.node, ["curl", "-s", "--max-time", "2", "http://127.0.0.1:10249/metrics"]);
    const synced = async () =>
      /^kubeproxy_sync_proxy_rules_last_timestamp_seconds\{ip_family="IPv4"\} [1-9]/m.test(scrape()) ||
      undefined;

    before(async () => {
      cp = await startControlPlane();
      api = apiClient(cp.server, cp.stateDir);
      net = new Net(
        `sym${mode === "iptables" ? "i" : "n"}${process.pid % 1000}`,
        mode === "iptables" ? 214 : 215,
      );
      await net.build(["10.180.0.1"]);
      const kubeconfig = await net.kubeconfigFor(cp.kubeconfigPath, cp.server);
      await createNode(api, "node1", NODE_IP);
      await createService(api, "default", "web", { ports: [{ name: "dns", port: 53, protocol: "UDP" }] });
      await createSlice(api, "default", "web", { "10.180.0.1": "node1" });
      args = [
        `--kubeconfig=${kubeconfig}`,
        "--hostname-override=node1",
        `--cluster-cidr=${CLUSTER_CIDR}`,
        `--proxy-mode=${mode}`,
      ];
    });
    after(async () => {
      await net?.destroy();
      await cp?.stop();
    });

    test("every kubeproxy_* family upstream shows, ours shows, with the same help and type", async () => {
      const ours = startProxy(net.node, args);
      let oursText: string;
      try {
        await eventually("our first sync", synced);
        oursText = scrape();
      } finally {
        await ours.stop();
      }
      const upstream: ChildProcess = spawn("ip", ["netns", "exec", net.node, UPSTREAM, ...args], {
        stdio: "ignore",
      });
      let upstreamText: string;
      try {
        await eventually("upstream's first sync", synced);
        upstreamText = scrape();
      } finally {
        const exited = once(upstream, "exit");
        upstream.kill("SIGTERM");
        await exited;
      }
      const have = new Set(families(oursText));
      assert.deepEqual(
        families(upstreamText).filter((l) => !have.has(l)),
        [],
      );
    });
  });
