// The metrics a Prometheus user scrapes, compared with kube-proxy v1.37.2's own binary: both run in turn on the
// same node namespace against the same API objects (a Service, its slice), in the same mode. Every kubeproxy_*
// family the binary shows must be in upstream-metrics.ts (the table written from upstream's source, which
// metrics-help.test.ts holds ours to) and in our scrape, with the same HELP and TYPE lines: one row per family.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import {
  missingControlPlane,
  resolveBinary,
  startControlPlane,
  type TestControlPlane,
} from "@switchyard/testbed";
import { CLUSTER_CIDR, missingKernelTools, Net, NODE_IP, startProxy } from "../src/testing/netns.js";
import { type Api, apiClient, createNode, createService, createSlice } from "./api.js";
import { expositionLines, familyLines, UPSTREAM_METRICS } from "./upstream-metrics.js";

const UPSTREAM = resolveBinary("kube-proxy").path;
const skip =
  missingKernelTools(["nft", "iptables-nft-save", "curl"]) ??
  missingControlPlane() ??
  (UPSTREAM ? undefined : "no kube-proxy binary: run npx switchyard-lab upstream build");

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

    test("every kubeproxy_* family upstream shows: in the source table and in ours, with the same help and type", async () => {
      const ours = startProxy(net.node, args);
      let oursText: string;
      try {
        await eventually("our first sync", synced);
        oursText = scrape();
      } finally {
        await ours.stop();
      }
      const upstream: ChildProcess = spawn("ip", ["netns", "exec", net.node, UPSTREAM ?? "", ...args], {
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
      const table = new Map(
        UPSTREAM_METRICS.filter((m) => m.modes.includes(mode)).map((m) => [
          `kubeproxy_${m.name}`,
          expositionLines(m),
        ]),
      );
      const theirs = familyLines(upstreamText);
      const have = familyLines(oursText);
      assert.ok(theirs.size >= 5, `upstream's scrape:\n${upstreamText}`);
      const rows = [...theirs].map(([name, lines]) => ({
        name,
        upstream: lines,
        table: table.get(name),
        ours: have.get(name),
      }));
      assert.deepEqual(
        rows.filter((r) => !(r.table?.join() === r.upstream.join() && r.ours?.join() === r.upstream.join())),
        [],
      );
    });
  });
