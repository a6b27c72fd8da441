// switchyard-proxy against a real API server and the real kernel, once per data plane
// (iptables-legacy, iptables-nft, nftables): every endpoint answers, a removed one stops
// answering, no endpoints is a REJECT, ITP Local without a local endpoint is a DROP, a
// NodePort answers from another namespace, and ETP Local keeps the client's address. Then ebpf mode, for the
// node's own traffic: balanced at connect, refused without endpoints, pinned across a restart, removed by --cleanup.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, rmdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import {
  CLIENT_IP,
  CLUSTER_CIDR,
  missingKernelTools,
  Net,
  NODE_IP,
  names,
  type ProxyRun,
  sh,
  startProxy,
} from "../src/testing/netns.js";
import { type Api, apiClient, createNode, createService, createSlice, setSlice } from "./api.js";

const TOOLS = ["nft", "iptables-legacy", "iptables-nft", "iptables-legacy-save", "iptables-nft-save"];
const skip = missingKernelTools(TOOLS) ?? missingControlPlane();
const NS = "shop";
const POD_IPS = ["10.180.0.1", "10.180.0.2", "10.180.0.3"];

interface Svc {
  ip: string;
  nodePort: number;
}

describe("switchyard-proxy: traffic in every mode", { skip, timeout: 600_000 }, () => {
  let cp: TestControlPlane;
  let api: Api;
  let net: Net;
  let kubeconfig: string;
  const svc: Record<string, Svc> = {};

  before(async () => {
    cp = await startControlPlane();
    api = apiClient(cp.server, cp.stateDir);
    net = new Net(`syt${process.pid % 10000}`, 211);
    await net.build(POD_IPS);
    kubeconfig = await net.kubeconfigFor(cp.kubeconfigPath, cp.server);
    await createNode(api, "node1", NODE_IP);
    await api.call("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    const port = [{ name: "http", port: 80, protocol: "TCP" as const }];
    const make = async (
      name: string,
      spec: Parameters<typeof createService>[3],
      backends: Record<string, string>,
    ) => {
      const s = await createService(api, NS, name, { ports: port, ...spec });
      svc[name] = { ip: s.spec?.clusterIP ?? "", nodePort: s.spec?.ports?.[0]?.nodePort ?? 0 };
      await createSlice(api, NS, name, backends);
    };
    await make("web", {}, { "10.180.0.1": "node1", "10.180.0.2": "node1" });
    await make("empty", {}, {});
    await make("itp", { internalTrafficPolicy: "Local" }, { "10.180.0.3": "node2" });
    await make("np", { type: "NodePort" }, { "10.180.0.3": "node1" });
    await make("etp", { type: "NodePort", externalTrafficPolicy: "Local" }, { "10.180.0.3": "node1" });
  });

  after(async () => {
    await net?.destroy();
    await cp?.stop();
  });

  const modes = [
    { name: "iptables (legacy backend)", mode: "iptables", hint: "iptables-legacy" },
    { name: "iptables (nft backend)", mode: "iptables", hint: "iptables-nft" },
    { name: "nftables", mode: "nftables", hint: undefined },
  ] as const;

  for (const m of modes) {
    test(m.name, async (t) => {
      // kubelet's hint chain is how iptables-wrapper (and so the proxy) picks the backend.
      if (m.hint) net.in(net.node, [m.hint, "-t", "mangle", "-N", "KUBE-IPTABLES-HINT"]);
      let proxy: ProxyRun | undefined;
      try {
        proxy = startProxy(net.node, [
          `--kubeconfig=${kubeconfig}`,
          `--proxy-mode=${m.mode}`,
          "--hostname-override=node1",
          `--cluster-cidr=${CLUSTER_CIDR}`,
          "--iptables-min-sync-period=100ms",
          "--nftables-min-sync-period=100ms",
        ]);
        const web = svc.web as Svc;
        const running = proxy;
        await eventually("the ClusterIP to answer", async () => {
          if (running.child.exitCode !== null) throw new Error(`proxy exited:\n${running.log()}`);
          return names(await net.probe(web.ip, 80, 1)).has("pod-0") || undefined;
        });
        // CI saw one ECONNREFUSED in 30 here in nftables mode, twice: a probe that drew the source port of one
        // sent before the first sync (see forgetUnansweredFlows).
        net.forgetUnansweredFlows(web.ip);
        if (m.hint) {
          const save = net.in(net.node, [`${m.hint}-save`, "-t", "nat"]);
          assert.match(save, /KUBE-SERVICES/, `rules went to ${m.hint}`);
        }

        await t.test("all endpoints answer", async () => {
          const answers = await net.probe(web.ip, 80, 30);
          // An unexpected answer is explained by the proxy's log or the node's conntrack entries and rulesets.
          if (!answers.every((a) => /^pod-[01]\b/.test(a)) || names(answers).size !== 2)
            assert.fail(`answers ${answers.join(", ")}\n${proxy?.log()}\n${net.kernelState()}`);
        });
        await t.test("no endpoints: connection refused (REJECT)", async () => {
          assert.deepEqual(new Set(await net.probe((svc.empty as Svc).ip, 80, 3)), new Set(["ECONNREFUSED"]));
        });
        await t.test("ITP Local without a local endpoint: dropped (timeout)", async () => {
          assert.deepEqual(new Set(await net.probe((svc.itp as Svc).ip, 80, 2)), new Set(["ETIMEDOUT"]));
        });
        await t.test("NodePort from another namespace; ETP Local keeps the client IP", async () => {
          const np = await net.probe(NODE_IP, (svc.np as Svc).nodePort, 5);
          assert.deepEqual(names(np), new Set(["pod-2"]), np.join(","));
          // Cluster policy masquerades, so the pod sees the node, not the client.
          assert.ok(
            np.every((a) => a.split(" ")[1] !== CLIENT_IP),
            np.join(","),
          );
          const etp = await net.probe(NODE_IP, (svc.etp as Svc).nodePort, 5);
          assert.deepEqual(new Set(etp), new Set([`pod-2 ${CLIENT_IP}`]), etp.join(","));
        });
        await t.test("a removed endpoint stops answering", async () => {
          await setSlice(api, NS, "web", { "10.180.0.1": "node1" });
          await eventually("pod-1 to leave", async () => {
            const a = names(await net.probe(web.ip, 80, 10));
            return a.size === 1 && a.has("pod-0") ? true : undefined;
          });
          const answers = await net.probe(web.ip, 80, 30);
          if (!answers.every((a) => /^pod-0\b/.test(a)))
            assert.fail(`answers ${answers.join(", ")}\n${proxy?.log()}\n${net.kernelState()}`);
          await setSlice(api, NS, "web", { "10.180.0.1": "node1", "10.180.0.2": "node1" });
        });
      } finally {
        assert.equal(await proxy?.stop(), 0, proxy?.log());
        if (m.hint) net.in(net.node, [m.hint, "-t", "mangle", "-X", "KUBE-IPTABLES-HINT"]);
      }
      // --cleanup leaves nothing of any mode behind.
      const cleanup = startProxy(net.node, ["--cleanup"]);
      const code = await new Promise((r) => cleanup.child.once("exit", r));
      assert.equal(code, 0, cleanup.log());
      assert.doesNotMatch(net.in(net.node, ["nft", "list", "tables"]), /kube-proxy/);
      for (const save of ["iptables-legacy-save", "iptables-nft-save"]) {
        const left = net
          .in(net.node, [save])
          .split("\n")
          .filter((l) => /KUBE-/.test(l) && !/KUBE-FIREWALL/.test(l));
        assert.deepEqual(left, [], `${save} still has ours`);
      }
      assert.ok(!names(await net.probe((svc.web as Svc).ip, 80, 1)).has("pod-0"), "rules are gone");
    });
  }

  // Socket-level balancing acts for the processes of one cgroup, where they connect (here a probe in the test's
  // cgroup); the client namespace's traffic to a NodePort meets the tc program on the node's eth0.
  test("ebpf (socket-level balancing for the node's cgroup)", async (t) => {
    const cgroup = `/sys/fs/cgroup/unified/sy-traffic-${process.pid}`;
    const bpfRoot = `/sys/fs/bpf/sy-traffic-${process.pid}`;
    mkdirSync(cgroup);
    const flags = [`--cgroup-root=${cgroup}`, `--bpf-root=${bpfRoot}`];
    const lbMapMax = 4096;
    let proxy: ProxyRun | undefined;
    const probe = (ip: string, port: number, count: number) => net.probeInCgroup(cgroup, ip, port, count);
    const args = [
      `--kubeconfig=${kubeconfig}`,
      "--proxy-mode=ebpf",
      "--hostname-override=node1",
      `--cluster-cidr=${CLUSTER_CIDR}`,
      "--nftables-min-sync-period=100ms",
      `--bpf-lb-map-max=${lbMapMax}`,
      ...flags,
    ];
    try {
      proxy = startProxy(net.node, args, {}, [], "nsenter");
      const web = svc.web as Svc;
      const running = proxy;
      await eventually("the ClusterIP to answer", async () => {
        if (running.child.exitCode !== null) throw new Error(`proxy exited:\n${running.log()}`);
        return names(await probe(web.ip, 80, 1)).has("pod-0") || undefined;
      });
      await t.test("all endpoints answer; conntrack sees the backends, never the ClusterIP", async () => {
        // A table that only tracks, so the node's conntrack is on whatever other tests left.
        const track =
          "table inet sy-track { chain out { type filter hook output priority 0; ct state new counter; }; }";
        net.in(net.node, ["nft", "-f", "-"], track);
        // The probes that waited for the first sync met no map entry yet and went out unbalanced: forget them.
        net.in(net.node, ["conntrack", "-F"]);
        try {
          assert.deepEqual(names(await probe(web.ip, 80, 30)), new Set(["pod-0", "pod-1"]));
          const tcp = net.in(net.node, ["conntrack", "-L", "-p", "tcp"]);
          assert.match(tcp, /dst=10\.180\.0\.[12] /, `the connections are tracked, to the pods:\n${tcp}`);
          assert.doesNotMatch(
            tcp,
            new RegExp(`dst=${web.ip.replaceAll(".", "\\.")} `),
            "no packet went to the ClusterIP",
          );
        } finally {
          net.in(net.node, ["nft", "delete", "table", "inet", "sy-track"]);
        }
      });
      await t.test("--bpf-lb-map-max sizes every load-balancing map", () => {
        for (const map of [
          "lb4_services",
          "lb4_backends",
          "lb4_reverse_nat",
          "lb4_affinity",
          "lb4_src_range",
        ]) {
          const shown = sh(["bpftool", "map", "show", "pinned", `${bpfRoot}/${map}`]);
          assert.match(shown, new RegExp(`max_entries ${lbMapMax}\\b`), `${map}: ${shown}`);
        }
      });
      await t.test("no endpoints, or ITP Local with none here: refused at connect", async () => {
        assert.deepEqual(new Set(await probe((svc.empty as Svc).ip, 80, 3)), new Set(["ECONNREFUSED"]));
        assert.deepEqual(new Set(await probe((svc.itp as Svc).ip, 80, 2)), new Set(["ECONNREFUSED"]));
      });
      await t.test("a NodePort on the node's address, from the node", async () => {
        assert.deepEqual(names(await probe(NODE_IP, (svc.np as Svc).nodePort, 5)), new Set(["pod-2"]));
      });
      await t.test(
        "NodePort from another namespace (tc on eth0); ETP Local keeps the client IP",
        async () => {
          const np = await net.probe(NODE_IP, (svc.np as Svc).nodePort, 5);
          assert.deepEqual(names(np), new Set(["pod-2"]), np.join(","));
          assert.ok(
            np.every((a) => a.split(" ")[1] === NODE_IP),
            `Cluster policy masquerades to the node: ${np.join(",")}`,
          );
          const etp = await net.probe(NODE_IP, (svc.etp as Svc).nodePort, 5);
          assert.deepEqual(new Set(etp), new Set([`pod-2 ${CLIENT_IP}`]), etp.join(","));
        },
      );
      await t.test("a removed endpoint stops being chosen", async () => {
        await setSlice(api, NS, "web", { "10.180.0.1": "node1" });
        await eventually("pod-1 to leave", async () => {
          const a = names(await probe(web.ip, 80, 10));
          return a.size === 1 && a.has("pod-0") ? true : undefined;
        });
        assert.deepEqual(names(await probe(web.ip, 80, 30)), new Set(["pod-0"]));
        await setSlice(api, NS, "web", { "10.180.0.1": "node1", "10.180.0.2": "node1" });
        // In the maps before the proxy stops: the restart below is to find nothing left to write.
        await eventually(
          "pod-1 to come back",
          async () => names(await probe(web.ip, 80, 10)).has("pod-1") || undefined,
        );
      });
      assert.equal(await proxy.stop(), 0, proxy.log());
      // The links are pinned: the programs outlive the process, as a restart needs.
      const afterExit = await probe(web.ip, 80, 5);
      assert.ok(
        afterExit.every((a) => /^pod-[01] /.test(a)),
        `balancing stopped with the process: ${afterExit}`,
      );
      // A restart finds what the last run wrote: it keeps every backend id and reverse NAT index (the affinity
      // and socket maps hold them) and, nothing having changed, writes no entry.
      const held = () =>
        ["lb4_backends", "lb4_reverse_nat", "lb4_services"].map((m) =>
          sh(["bpftool", "map", "dump", "pinned", `${bpfRoot}/${m}`]),
        );
      const before = held();
      const again = startProxy(net.node, [...args, "--v=2"], {}, [], "nsenter");
      proxy = again;
      const written = await eventually("the restart's first sync", async () => {
        if (again.child.exitCode !== null) throw new Error(`proxy exited:\n${again.log()}`);
        return again
          .log()
          .split("\n")
          .find((l) => l.includes("BPF maps written") && l.includes("IPv4"));
      });
      assert.match(written, /"steps":0\b/, `the restart wrote map entries: ${written}`);
      assert.deepEqual(held(), before, "the maps hold what they held");
      assert.equal(await again.stop(), 0, again.log());
    } finally {
      await proxy?.stop();
      // --cleanup removes the programs, links and maps.
      const cleanup = startProxy(net.node, ["--cleanup", ...flags], {}, [], "nsenter");
      const code = await new Promise((r) => cleanup.child.once("exit", r));
      assert.equal(code, 0, cleanup.log());
      assert.equal(existsSync(bpfRoot), false, `${bpfRoot} is left`);
      assert.doesNotMatch(
        net.in(net.node, ["nft", "list", "tables"]),
        /switchyard-ebpf/,
        "the NAT hooks' table is left",
      );
      assert.ok(!names(await probe((svc.web as Svc).ip, 80, 1)).has("pod-0"), "programs are gone");
      rmdirSync(cgroup);
    }
  });
});
