import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { describe, test } from "node:test";
import yaml from "js-yaml";
import type { Container, Pod } from "kubernetes-types/core/v1.js";
import { refusedAnswer } from "../src/agent/dns-refused.js";
import { expandVars } from "../src/agent/expand-vars.js";
import { resolveImage } from "../src/agent/images.js";
import { emptyLoadStats, loadDelta, recordFailure } from "../src/agent/loadgen-stats.js";
import { sandboxArgv } from "../src/agent/sandbox-command.js";
import { planVolumes } from "../src/agent/volumes.js";
import { failures, formatReport } from "../src/migrate/report.js";
import { repoRoot } from "../src/self.js";
import { applyOrder, objectPath } from "../src/stack/apply.js";
import { modeConfigMap, modeDaemonSet, modeLabel, withoutLabelledNodes } from "../src/stack/canary.js";
import { ebpfMounts, ebpfPlaces, inCgroup, nodeCgroup, nodePinRoot } from "../src/stack/ebpf-places.js";
import {
  configMode,
  type KubeObject,
  labProxyDaemonSet,
  labStack,
  needOurStack,
  readManifests,
  stackLine,
} from "../src/stack/manifests.js";
import {
  countKubeLines,
  countNftEbpfLines,
  countNftProxyLines,
  leftovers,
  meanSyncMs,
  parseSyncStats,
} from "../src/stack/proxy-measure.js";
import { kubeadmAddonConfig } from "../src/stack/upstream.js";

const stack = readManifests(repoRoot);
const labOptions = {
  proxyMode: "iptables" as const,
  server: "https://198.18.0.1:6443",
  clusterCidr: "10.250.0.0/16",
  dnsIp: "10.96.0.10",
};
const lab = labStack(stack, labOptions);
const find = (kind: string, name: string) => {
  const o = lab.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind}/${name}`);
  return o;
};

describe("the stack's manifests", () => {
  test("the lab edits only what an installer would: mode, cluster CIDR, apiserver, DNS ClusterIP", () => {
    const cm = find("ConfigMap", "kube-proxy").data as Record<string, string>;
    assert.equal(configMode(cm["config.conf"] ?? ""), "iptables");
    assert.match(cm["config.conf"] ?? "", /^clusterCIDR: 10\.250\.0\.0\/16$/m);
    assert.match(cm["kubeconfig.conf"] ?? "", /server: https:\/\/198\.18\.0\.1:6443/);
    assert.equal((find("Service", "kube-dns").spec as { clusterIP: string }).clusterIP, "10.96.0.10");
    const untouched = stack.filter((o) => !(o.kind === "ConfigMap" && o.metadata.name === "kube-proxy"));
    for (const o of untouched.filter((o) => o.kind !== "Service"))
      assert.deepEqual(
        lab.find((x) => x.kind === o.kind && x.metadata.name === o.metadata.name),
        o,
      );
    // The manifests themselves are not changed in memory.
    const original = stack.find((o) => o.kind === "ConfigMap" && o.metadata.name === "kube-proxy");
    const originalConf = (original?.data as Record<string, string> | undefined)?.["config.conf"] ?? "";
    assert.equal(configMode(originalConf), "nftables");
  });

  test("dual-stack: both cluster CIDRs; an IPv6-primary cluster binds kube-proxy to :: as kubeadm does", () => {
    const conf = (o: Parameters<typeof labStack>[1]) => {
      const cm = labStack(stack, o).find((x) => x.kind === "ConfigMap" && x.metadata.name === "kube-proxy");
      return (cm?.data as Record<string, string> | undefined)?.["config.conf"] ?? "";
    };
    const base = { proxyMode: "iptables" as const, server: "https://198.18.0.1:6443" };
    const dual = conf({ ...base, clusterCidr: "10.244.0.0/16,fd00:10:244::/56", dnsIp: "10.96.0.10" });
    assert.match(dual, /^clusterCIDR: 10\.244\.0\.0\/16,fd00:10:244::\/56$/m);
    assert.match(dual, /^bindAddress: 0\.0\.0\.0$/m);
    const v6 = conf({ ...base, clusterCidr: "fd00:10:244::/56", dnsIp: "fd00:10:96::a" });
    assert.match(v6, /^bindAddress: "::"$/m);
    assert.match(v6, /^healthzBindAddress: "\[::\]:10256"$/m);
  });

  test("apply order puts identities and config before workloads; paths follow the API groups", () => {
    const kinds = applyOrder(lab).map((o) => o.kind);
    assert.ok(kinds.lastIndexOf("ConfigMap") < kinds.indexOf("DaemonSet"));
    assert.ok(kinds.lastIndexOf("ServiceAccount") < kinds.indexOf("Deployment"));
    assert.equal(
      objectPath(find("DaemonSet", "kube-proxy")),
      "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy",
    );
    assert.equal(
      objectPath(find("ClusterRole", "system:coredns")),
      "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:coredns",
    );
    assert.equal(objectPath(find("Service", "kube-dns")), "/api/v1/namespaces/kube-system/services/kube-dns");
    assert.equal(
      objectPath(find("PodDisruptionBudget", "coredns")),
      "/apis/policy/v1/namespaces/kube-system/poddisruptionbudgets/coredns",
    );
    assert.throws(() => objectPath({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" } }), /Secret/);
  });
});

test("the DNS pods have the EKS add-on's disruption budget: policy/v1, at most one unavailable, kube-dns's pods", () => {
  const pdb = find("PodDisruptionBudget", "coredns") as KubeObject & {
    spec: {
      maxUnavailable?: number;
      minAvailable?: number;
      selector: { matchLabels: Record<string, string> };
    };
  };
  assert.equal(pdb.apiVersion, "policy/v1");
  assert.equal(pdb.metadata.namespace, "kube-system");
  assert.deepEqual(pdb.spec, { maxUnavailable: 1, selector: { matchLabels: { "k8s-app": "kube-dns" } } });
  const dns = find("Deployment", "coredns") as KubeObject & {
    spec: { template: { metadata: { labels: Record<string, string> } } };
  };
  for (const [k, v] of Object.entries(pdb.spec.selector.matchLabels))
    assert.equal(dns.spec.template.metadata.labels[k], v, `the DNS pods carry ${k}=${v}`);
});

describe("upstream's stack", () => {
  test("kubeadm's addon configuration: the pinned release, the apiserver the nodes reach, the lab's CIDRs, the mode", () => {
    const text = kubeadmAddonConfig({
      kubernetesVersion: "v1.37.2",
      server: "https://198.18.0.1:6443",
      serviceCidr: "10.96.0.0/16",
      clusterCidr: "10.244.0.0/16",
      proxyMode: "nftables",
    });
    const [cluster, proxy] = yaml.loadAll(text) as Record<string, unknown>[];
    assert.deepEqual(cluster, {
      apiVersion: "kubeadm.k8s.io/v1beta4",
      kind: "ClusterConfiguration",
      kubernetesVersion: "v1.37.2",
      controlPlaneEndpoint: "198.18.0.1:6443",
      networking: { serviceSubnet: "10.96.0.0/16", podSubnet: "10.244.0.0/16", dnsDomain: "cluster.local" },
    });
    assert.deepEqual(proxy, {
      apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
      kind: "KubeProxyConfiguration",
      mode: "nftables",
    });
  });

  test("status names the stack; scenarios and migrate refuse any but Switchyard's, in one line", () => {
    assert.equal(stackLine(undefined), "stack:      none (--no-stack)");
    assert.equal(stackLine({ proxyMode: "iptables" }), "stack:      switchyard, kube-proxy mode iptables");
    assert.match(
      stackLine({ kind: "upstream", proxyMode: "nftables" }),
      /^stack: {6}upstream \(kubeadm's .*nftables$/,
    );
    assert.doesNotThrow(() => needOurStack("migrate", { kind: "switchyard" }));
    assert.throws(
      () => needOurStack("migrate", undefined),
      /^Error: migrate needs Switchyard's stack; this lab runs none/,
    );
  });
});

describe("the node agent runs the stack's pods", () => {
  const ctx = { repoRoot, echo: ["node", "echo.js"], loadgen: ["node", "loadgen.js"], node: "node" };

  test("a command naming the image's program replaces the entrypoint; $(VAR) expands from the env", () => {
    const proxy = find("DaemonSet", "kube-proxy").spec as {
      template: { spec: { containers: Container[] } };
    };
    const container = proxy.template.spec.containers[0];
    assert.ok(container);
    const run = resolveImage(container, ctx, { NODE_NAME: "node-2" });
    assert.equal(run.kind, "process");
    const argv = run.kind === "process" ? run.argv : [];
    assert.match(argv[1] ?? "", /apps\/kube-proxy\/bin\/switchyard-proxy\.js$/);
    assert.deepEqual(argv.slice(2), [
      "--config=/var/lib/kube-proxy/config.conf",
      "--hostname-override=node-2",
    ]);
    const wrong = resolveImage({ name: "x", image: "switchyard/kube-proxy", command: ["/bin/bash"] }, ctx);
    assert.equal(wrong.kind, "unknown");
    assert.equal(expandVars("$(A)-$(B)-$$(A)", { A: "1" }), "1-$(B)-$(A)");
  });

  test("volumes: ConfigMaps as files, hostPaths bound from the host's root, mount points made in the container's", () => {
    const proxy = find("DaemonSet", "kube-proxy").spec as {
      template: { spec: NonNullable<Pod["spec"]> };
    };
    const pod: Pod = { spec: proxy.template.spec };
    const container = proxy.template.spec.containers[0];
    assert.ok(container);
    const plan = planVolumes(pod, container, "/s/pod");
    assert.deepEqual(plan.fileSets, [
      {
        dir: "/s/pod/volumes/kube-proxy",
        sources: [{ kind: "configMap", name: "kube-proxy", items: undefined, optional: false }],
        defaultMode: 0o644,
      },
    ]);
    assert.deepEqual(
      plan.hostPaths.map((h) => [h.path, h.create]),
      [
        ["/run/xtables.lock", "file"],
        ["/lib/modules", undefined],
      ],
    );
    const argv = sandboxArgv({
      netns: "n",
      hostname: "h",
      rootDir: "/s/pod/rootfs/kube-proxy",
      hostMounts: [],
      etc: { resolvConf: "/s/pod/resolv.conf", hosts: "/s/pod/hosts", hostname: "/s/pod/hostname" },
      serviceAccountDir: undefined,
      argv: ["x"],
      mounts: plan.mounts,
    });
    const script = argv[argv.indexOf("-c") + 1] ?? "";
    // The container's own /run first, then the host's lock file (under the host's /run) bound onto a file in it.
    assert.ok(script.indexOf("pivot_root") < script.indexOf("sy-run /run"));
    assert.ok(
      script.indexOf("sy-run /run") < script.indexOf("'/.sy-host/run/xtables.lock' '/run/xtables.lock'"),
    );
    assert.match(script, /: >'\/run\/xtables\.lock'; fi\nmount --bind '\/\.sy-host\/run\/xtables\.lock'/);
    assert.match(
      script,
      /mkdir -p '\/var\/lib\/kube-proxy'\nmount --bind -o ro '\/\.sy-host\/s\/pod\/volumes\/kube-proxy' '\/var\/lib\/kube-proxy'/,
    );
  });

  test("the upstream stand-in refuses every query at once, keeping its id and question", () => {
    const query = Buffer.from(
      "abcd0100000100000000000103777777076578616d706c6503636f6d00000100010000291000000000000000",
      "hex",
    );
    const answer = refusedAnswer(query);
    assert.ok(answer);
    assert.equal(answer.readUInt16BE(0), 0xabcd);
    assert.equal((answer[3] ?? 0) & 0x0f, 5);
    assert.equal((answer[2] ?? 0) & 0x80, 0x80);
    assert.equal(answer.readUInt16BE(10), 0, "the client's EDNS record is not echoed");
    assert.equal(answer.length, query.length - 11);
    assert.equal(refusedAnswer(answer), undefined, "answers are not answered");
  });
});

describe("migration", () => {
  const ds = find("DaemonSet", "kube-proxy");
  const cm = find("ConfigMap", "kube-proxy");

  test("the mode's DaemonSet runs on labelled nodes with its own ConfigMap; the original keeps off them", () => {
    const nft = modeDaemonSet(ds, "nftables");
    assert.equal(nft.metadata.name, "kube-proxy-nftables");
    const spec = nft.spec as unknown as {
      selector: { matchLabels: Record<string, string> };
      template: {
        spec: { nodeSelector: Record<string, string>; volumes: Array<{ configMap?: { name: string } }> };
      };
    };
    assert.deepEqual(spec.selector.matchLabels, { "k8s-app": "kube-proxy-nftables" });
    assert.equal(spec.template.spec.nodeSelector[modeLabel], "nftables");
    assert.ok(spec.template.spec.volumes.some((v) => v.configMap?.name === "kube-proxy-nftables"));
    assert.equal(
      configMode((modeConfigMap(cm, "nftables").data as Record<string, string>)["config.conf"] ?? ""),
      "nftables",
    );
    const original = withoutLabelledNodes(ds).spec as { template: { spec: { affinity: unknown } } };
    assert.match(JSON.stringify(original.template.spec.affinity), /"operator":"DoesNotExist"/);
    assert.equal(
      (ds.spec as { template: { spec: { affinity?: unknown } } }).template.spec.affinity,
      undefined,
    );
  });

  test("measurements: sync stats summed over families, our rules counted, the kubelet's KUBE-FIREWALL left out", () => {
    const metrics = [
      'kubeproxy_sync_proxy_rules_duration_seconds_bucket{le="0.1",ip_family="IPv4"} 1',
      'kubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family="IPv4"} 0.3',
      'kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"} 2',
      'kubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family="IPv6"} 0.1',
      'kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv6"} 2',
    ].join("\n");
    const s = parseSyncStats(metrics);
    assert.equal(s.count, 4);
    assert.ok(Math.abs((meanSyncMs({ count: 0, sumSeconds: 0 }, s) ?? 0) - 100) < 1e-9);
    assert.equal(meanSyncMs(s, s), undefined);
    const save = [
      "*nat",
      ":KUBE-SERVICES - [0:0]",
      "-A PREROUTING -j KUBE-SERVICES",
      "-A KUBE-FIREWALL -j DROP",
      "-A INPUT -j ACCEPT",
    ].join("\n");
    assert.equal(countKubeLines(save), 1);
    const ruleset = [
      "table ip filter {",
      "}",
      "table ip kube-proxy {",
      "\tchain a {",
      "\t}",
      "}",
      "table ip6 kube-proxy {",
      "}",
    ].join("\n");
    assert.equal(countNftProxyLines(ruleset), 6);
    assert.equal(leftovers({ iptablesLegacy: 1, iptablesNft: 2, nftables: 9 }, "nftables"), 3);
    assert.equal(leftovers({ iptablesLegacy: 1, iptablesNft: 2, nftables: 9 }, "iptables"), 9);
  });

  test("traffic is the difference between two readings; the report prints every number", () => {
    const before = emptyLoadStats("2024-01-01T00:00:00Z");
    before.now = "2024-01-01T00:00:10Z";
    const after = structuredClone(before);
    after.tcp.attempts = 40;
    after.dns.attempts = 20;
    recordFailure(after, {
      at: "2024-01-01T00:00:12Z",
      kind: "tcp",
      target: "echo:9000",
      error: "ECONNREFUSED",
    });
    // Sent before the first reading, timed out after it: it belongs to the time before.
    recordFailure(after, { at: "2024-01-01T00:00:09.5Z", kind: "dns", target: "x.", error: "ETIMEOUT" });
    after.now = "2024-01-01T00:00:15Z";
    const d = loadDelta(before, after);
    assert.deepEqual(
      [d.tcp, d.dns, d.recent.length],
      [{ attempts: 40, failures: 1 }, { attempts: 20, failures: 0 }, 1],
    );
    // Once the bounded list lost part of the window, the counters are all there is.
    const flood = structuredClone(after);
    for (let i = 0; i < 600; i++)
      recordFailure(flood, { at: "2024-01-01T00:00:13Z", kind: "dns", target: "x.", error: "ETIMEOUT" });
    assert.equal(loadDelta(before, flood).dns.failures, 601);
    const report = {
      to: "nftables" as const,
      prepareSeconds: 5,
      totalSeconds: 12,
      skipped: [],
      switches: [
        {
          node: "node-1",
          from: "iptables",
          to: "nftables" as const,
          switchSeconds: 2.5,
          syncBeforeMs: 40,
          syncAfterMs: 12,
          rulesBefore: { iptablesLegacy: 0, iptablesNft: 70, nftables: 0 },
          rulesAfter: { iptablesLegacy: 0, iptablesNft: 0, nftables: 150 },
          leftovers: 0,
          traffic: { "node-2": d },
        },
      ],
    };
    assert.equal(failures(report), 1);
    const text = formatReport(report);
    assert.match(text, /node-1 +iptables +nftables +2\.5s +40\.0ms +12\.0ms +0\/70\/0 +0\/0\/150 +0/);
    assert.match(text, /node-2 +tcp 1\/40 +dns 0\/20/);
    // kind's node names are longer than netns's; the columns still stand apart.
    const [sw] = report.switches;
    const kind = formatReport({
      ...report,
      switches: sw ? [{ ...sw, node: "sy-e2e-control-plane", traffic: { "sy-e2e-worker2": d } }] : [],
    });
    assert.match(kind, /^sy-e2e-control-plane +iptables +nftables /m);
    assert.match(kind, /^ {2}sy-e2e-worker2 +tcp 1\/40/m);
  });
});

describe("ebpf mode in a lab", () => {
  const places = ebpfPlaces("/sys/fs/cgroup/unified", "sy");
  type ProxyPod = {
    containers: {
      name: string;
      command: string[];
      env?: unknown[];
      volumeMounts: { name: string; mountPath: string }[];
    }[];
    volumes: { name: string; hostPath?: { path: string; type?: string } }[];
  };
  const podOf = (ds: KubeObject) => (ds.spec as { template: { spec: ProxyPod } }).template.spec;

  test("every mode's proxy gets its node's cgroup and pin folder, and the host's cgroup2 and BPF file systems", () => {
    const objects = labStack(stack, { ...labOptions, proxyMode: "ebpf", ebpf: places });
    const ds = objects.find((o) => o.kind === "DaemonSet" && o.metadata.name === "kube-proxy");
    assert.ok(ds);
    const pod = podOf(ds);
    const proxy = pod.containers[0];
    assert.deepEqual(proxy?.command.slice(-2), [
      "--cgroup-root=/sys/fs/cgroup/switchyard/sy/$(NODE_NAME)",
      "--bpf-root=/sys/fs/bpf/switchyard/sy/$(NODE_NAME)",
    ]);
    assert.deepEqual(proxy?.volumeMounts.slice(-2), [
      { name: "bpf-maps", mountPath: "/sys/fs/bpf" },
      { name: "cgroup2", mountPath: "/sys/fs/cgroup" },
    ]);
    assert.deepEqual(pod.volumes.slice(-2), [
      { name: "bpf-maps", hostPath: { path: "/sys/fs/bpf", type: "Directory" } },
      { name: "cgroup2", hostPath: { path: "/sys/fs/cgroup/unified", type: "Directory" } },
    ]);
    // The node agent binds both from the host's own /sys, and $(NODE_NAME) comes from the pod's env.
    const plan = planVolumes(
      { spec: pod as unknown as NonNullable<Pod["spec"]> },
      proxy as Container,
      "/s/p",
    );
    assert.deepEqual(
      plan.mounts.slice(-2).map((m) => [m.source, m.target]),
      [
        ["/sys/fs/bpf", "/sys/fs/bpf"],
        ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"],
      ],
    );
    assert.equal(
      expandVars(proxy?.command.at(-2) ?? "", { NODE_NAME: "node-2" }),
      "--cgroup-root=/sys/fs/cgroup/switchyard/sy/node-2",
    );
    const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "kube-proxy");
    assert.equal(configMode((cm?.data as Record<string, string> | undefined)?.["config.conf"] ?? ""), "ebpf");
    // The migration's per-mode DaemonSets are made from it, and so keep it; without places nothing is added.
    assert.deepEqual(podOf(modeDaemonSet(ds, "ebpf")).volumes.slice(-2), pod.volumes.slice(-2));
    assert.deepEqual(labProxyDaemonSet(repoRoot, places).spec, ds.spec);
    assert.deepEqual(labProxyDaemonSet(repoRoot), find("DaemonSet", "kube-proxy"));
  });

  test("paths: a node's cgroup and pin folder below the lab's", () => {
    assert.equal(nodeCgroup(places, "node-1"), "/sys/fs/cgroup/unified/switchyard/sy/node-1");
    assert.equal(nodePinRoot(places, "node-1"), "/sys/fs/bpf/switchyard/sy/node-1");
  });

  const cgroup2 = ebpfMounts(readFileSync("/proc/self/mountinfo", "utf8")).cgroup2Mount;
  const noCgroup = process.getuid?.() !== 0 ? "needs root" : cgroup2 ? undefined : "no cgroup2 mount";
  test("a command run through inCgroup is in that node cgroup's system leaf", { skip: noCgroup }, () => {
    const dir = `${cgroup2}/sy-incgroup-${process.pid}`;
    mkdirSync(dir);
    try {
      const [bin = "", ...args] = [...inCgroup(dir), "cat", "/proc/self/cgroup"];
      const out = execFileSync(bin, args, { encoding: "utf8" });
      // Its system leaf: the node's directory itself holds no process (pods' directories are beside the leaf).
      assert.match(out, new RegExp(`^0::/sy-incgroup-${process.pid}/system$`, "m"));
    } finally {
      rmdirSync(`${dir}/system`);
      rmdirSync(dir);
    }
  });

  test("the host's mounts: the cgroup2 mount found, a missing one or a missing BPF file system named", () => {
    const line = (id: number, point: string, type: string) => `${id} 1 0:${id} / ${point} rw - ${type} x rw`;
    const hybrid = [line(30, "/sys/fs/cgroup", "tmpfs"), line(31, "/sys/fs/cgroup/unified", "cgroup2")];
    assert.deepEqual(ebpfMounts([...hybrid, line(40, "/sys/fs/bpf", "bpf")].join("\n")), {
      cgroup2Mount: "/sys/fs/cgroup/unified",
    });
    assert.match(ebpfMounts(hybrid.join("\n")).missing ?? "", /no BPF file system at \/sys\/fs\/bpf/);
    assert.match(ebpfMounts(line(40, "/sys/fs/bpf", "bpf")).missing ?? "", /no cgroup2/);
  });

  test("leftovers: ebpf leaves none of the rule modes', a rule mode none of ebpf's programs or pins", () => {
    const c = { iptablesLegacy: 1, iptablesNft: 2, nftables: 9, bpf: 12 };
    assert.equal(leftovers(c, "ebpf"), 12);
    assert.equal(leftovers(c, "iptables"), 21);
    assert.equal(leftovers(c, "nftables"), 15);
    assert.equal(leftovers({ ...c, bpf: undefined }, "iptables"), 9);
  });

  test("ebpf mode's nftables table is counted apart from kube-proxy's, whose leftovers it must not be", () => {
    const ruleset = [
      "table ip kube-proxy {",
      "\tchain a {",
      "\t}",
      "}",
      "table inet switchyard-ebpf {",
      "\tchain nat-hooks {",
      "\t\ttype nat hook postrouting priority srcnat; policy accept;",
      "\t\tct status dnat counter packets 0 bytes 0",
      "\t}",
      "}",
    ].join("\n");
    assert.equal(countNftProxyLines(ruleset), 4);
    assert.equal(countNftEbpfLines(ruleset), 6);
    assert.equal(countNftEbpfLines("table inet filter {\n}"), 0);
  });

  test("the report counts ebpf mode's objects after the rules", () => {
    const zero = { attempts: 10, failures: 0 };
    const text = formatReport({
      to: "ebpf",
      prepareSeconds: undefined,
      totalSeconds: 6,
      skipped: [],
      switches: [
        {
          node: "node-1",
          from: "nftables",
          to: "ebpf",
          switchSeconds: 1.5,
          syncBeforeMs: 20,
          syncAfterMs: 5,
          rulesBefore: { iptablesLegacy: 0, iptablesNft: 0, nftables: 170, bpf: 0 },
          rulesAfter: { iptablesLegacy: 0, iptablesNft: 0, nftables: 0, bpf: 14 },
          leftovers: 0,
          traffic: { "node-2": { tcp: zero, dns: zero } },
        },
      ],
    });
    assert.match(text, /node-1 +nftables +ebpf +1\.5s +20\.0ms +5\.0ms +0\/0\/170\/0 +0\/0\/0\/14 +0/);
    assert.match(text, /then ebpf mode's objects: BPF programs on its cgroup, objects pinned in its folder/);
  });
});
