import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cidrContainsText as contains, familyOf, hostPort } from "@switchyard/basics";
import { eventually } from "@switchyard/kube/testing";
import { docker, dockerEngine } from "@switchyard/testbed";
import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { kindDown } from "../../src/kind/lab-down.js";
import { kindStatus } from "../../src/kind/lab-status.js";
import { spawnExec } from "../../src/kind/spawn-exec.js";
import type { KindLabState } from "../../src/kind/state.js";
import type { KindTools } from "../../src/kind/tools.js";
import { migrate } from "../../src/migrate/migrate.js";
import { kindMigrateLab, kindWorkloadImages } from "../../src/migrate/migrate-lab.js";
import { formatReport, switchFailures } from "../../src/migrate/report.js";
import { hints } from "../../src/scenarios/hints/hints.js";
import { scale } from "../../src/scenarios/scale/scale.js";
import { repoRoot } from "../../src/self.js";
import { writtenByOurController } from "../../src/stack/deploy.js";
import { stepTable } from "../../src/timing/step-times.js";
import { runMain } from "../cli/harness.js";
import { finding, runScenario } from "../scenarios/harness.js";
import { webServer } from "./swap-traffic.js";
import { runProbe, upTestCluster } from "./test-cluster.js";

// A real kind cluster on this machine's engine: the node image made locally where none can be pulled, our
// images built and loaded, the stack applied. Two workers keep it inside two cores.
const engine = dockerEngine();
const name = "sy-e2e";
const probeImage = "switchyard/cluster-dns:0.1.0";

// A pod from one of our images (it has node): a lookup through the pod's resolv.conf (kube-dns, our DNS, reached
// through our proxy) and a TCP connect to the `kubernetes` ClusterIP. Prints one JSON line.
const probeScript = `
const dns = require("node:dns").promises, net = require("node:net");
const connect = (host, port) => new Promise((ok) => {
  const s = net.connect({ host, port, timeout: 3000 }, () => { s.destroy(); ok("connected"); });
  s.on("error", (e) => ok(e.code)); s.on("timeout", () => { s.destroy(); ok("timeout"); });
});
(async () => {
  const a = await dns.resolve4("kubernetes.default.svc.cluster.local").catch((e) => e.code);
  console.log(JSON.stringify({ lookup: a, clusterIp: await connect("10.96.0.1", 443) }));
})();`;

// GETs every target (host:port, an IPv6 host in brackets) until a web pod answers, every 500 ms, 20 times at most (a new Service rejects
// until the proxies have its endpoints); prints {name: "web" | what went wrong} and the most tries one took.
const httpGetAll = (targets: Record<string, string>) => `
const http = require("node:http"), targets = ${JSON.stringify(targets)};
const get = (t) => new Promise((ok) => {
  const at = t.lastIndexOf(":"), host = t.slice(0, at).replace(/^\\[|\\]$/g, ""), port = t.slice(at + 1);
  http.get({ host, port, timeout: 3000 }, (r) => {
    let body = ""; r.on("data", (d) => (body += d)); r.on("end", () => ok(body.startsWith("web-") ? "web" : body));
  }).on("error", (e) => ok(e.code)).on("timeout", function () { this.destroy(new Error("timeout")); });
});
(async () => {
  const out = {};
  let most = 0;
  for (const [name, t] of Object.entries(targets)) {
    let tries = 0;
    while (tries++ < 20 && (out[name] = await get(t)) !== "web") await new Promise((r) => setTimeout(r, 500));
    most = Math.max(most, tries);
  }
  console.log(JSON.stringify({ answers: out, most }));
})();`;

/** Every node's InternalIPs, the primary first, by node name. */
function internalIps(kubectl: (...args: string[]) => string): Record<string, string[]> {
  const nodes = JSON.parse(kubectl("get", "nodes", "-o", "json")) as { items: Node[] };
  return Object.fromEntries(
    nodes.items.map((n) => [
      n.metadata?.name ?? "",
      (n.status?.addresses ?? []).filter((a) => a.type === "InternalIP").map((a) => a.address),
    ]),
  );
}

// A lookup of a name's A and AAAA records, again every 500 ms (20 times at most) until both answer; one JSON line.
const lookupBoth = (name: string) => `
const dns = require("node:dns").promises, name = ${JSON.stringify(name)};
(async () => {
  let a, aaaa;
  for (let i = 0; i < 20; i++) {
    a = await dns.resolve4(name).catch((e) => e.code);
    aaaa = await dns.resolve6(name).catch((e) => e.code);
    if (Array.isArray(a) && Array.isArray(aaaa)) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log(JSON.stringify({ a, aaaa }));
})();`;

describe("kind runtime: a real dual-stack cluster on this machine's Docker engine", {
  skip: engine.skip,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-kind-e2e-"));
  let state: KindLabState;
  let tools: KindTools;
  let kubectl: (...args: string[]) => string;

  let volumesBefore = new Set<string>();

  before(async () => {
    Object.assign(process.env, engine.env);
    volumesBefore = new Set(docker(engine, ["volume", "ls", "-q"]).split("\n"));
    ({ tools, state, kubectl } = await upTestCluster(engine, dir, name, "switchyard", "dual"));
    console.log(
      `# kind up (dual-stack): nodes in ${state.nodesSeconds?.toFixed(1)} s, stack in ${state.stack?.seconds.toFixed(1)} s, ${state.upSeconds?.toFixed(1)} s in all (node image ${state.input.nodeImage})`,
    );
    for (const line of stepTable(state.steps ?? [])) console.log(`# ${line}`);
  });

  after(async () => {
    await kindDown(dir).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  test("status: the control-plane node and two workers Ready, the stack's pods Running", async () => {
    const status = await kindStatus(dir, { tools });
    assert.ok(status.healthy, status.text);
    const nodes = JSON.parse(kubectl("get", "nodes", "-o", "json")) as {
      items: { metadata: { name: string }; status: { conditions: { type: string; status: string }[] } }[];
    };
    assert.deepEqual(nodes.items.map((n) => n.metadata.name).sort(), [
      `${name}-control-plane`,
      `${name}-worker`,
      `${name}-worker2`,
    ]);
    for (const n of nodes.items)
      assert.ok(
        n.status.conditions.some((c) => c.type === "Ready" && c.status === "True"),
        `${n.metadata.name} Ready`,
      );
    const labels = docker(engine, [
      ...["ps", "--filter", `label=io.x-k8s.kind.cluster=${name}`],
      ...["--format", '{{.Names}} {{.Label "io.x-k8s.kind.role"}}'],
    ]);
    assert.match(labels, new RegExp(`${name}-worker2 worker`));
  });

  test("the workshop's first workload runs at once: switchyard/echo:0.1.0 was loaded with the stack, not pulled", () => {
    kubectl("create", "deployment", "echo", "--image=switchyard/echo:0.1.0", "--replicas=2");
    kubectl("rollout", "status", "deployment/echo", "--timeout=120s");
    const pulls = kubectl("get", "events", "--field-selector", "reason=Pulling", "-o", "name");
    assert.equal(pulls.trim(), "", "no image was pulled");
    kubectl("delete", "deployment", "echo", "--wait=true");
  });

  test("a pod resolves kubernetes.default through kube-dns and connects to the kubernetes ClusterIP", () => {
    const result = runProbe(kubectl, "probe", probeImage, probeScript);
    assert.deepEqual(result, { lookup: ["10.96.0.1"], clusterIp: "connected" });
  });

  test("a NodePort answers on every node, from a pod on another node and from the host", async () => {
    const worker = `${name}-worker`;
    kubectl(
      "create",
      "deployment",
      "web",
      `--image=${probeImage}`,
      "--",
      "/nodejs/bin/node",
      "-e",
      webServer,
    );
    const pin = { spec: { template: { spec: { nodeSelector: { "kubernetes.io/hostname": worker } } } } };
    kubectl("patch", "deployment", "web", "-p", JSON.stringify(pin));
    kubectl("rollout", "status", "deployment/web", "--timeout=180s");
    kubectl("expose", "deployment", "web", "--type=NodePort", "--port=80", "--target-port=8080");
    const nodePort = Number(kubectl("get", "service", "web", "-o", "jsonpath={.spec.ports[0].nodePort}"));
    // Each node's primary (IPv4) address; the dual-stack test below takes the IPv6 ones.
    const targets = Object.fromEntries(
      Object.entries(internalIps(kubectl)).map(([node, ips]) => [node, `${ips[0]}:${nodePort}`]),
    );
    // The web pod runs on the first worker; the client on the second, so every answer crossed a node but one.
    const overrides = JSON.stringify({ spec: { nodeName: `${name}-worker2` } });
    const flags = ["--overrides", overrides];
    const fromPod = runProbe(kubectl, "nodeport", probeImage, httpGetAll(targets), flags) as {
      answers: unknown;
      most: number;
    };
    const want = Object.fromEntries(Object.keys(targets).map((n) => [n, "web"]));
    console.log(`# NodePort from a pod: every node answered within ${fromPod.most} tries (500 ms apart)`);
    assert.deepEqual(fromPod.answers, want);
    const fromHost = await new Promise((ok) => {
      const child = spawn(process.execPath, ["-e", httpGetAll(targets)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("close", () => ok((JSON.parse(out) as { answers: unknown }).answers));
    });
    assert.deepEqual(fromHost, want);
  });

  test("dual-stack: every node and pod has an address of each family, from its node's pod CIDR of the family", () => {
    const nodes = JSON.parse(kubectl("get", "nodes", "-o", "json")) as { items: Node[] };
    const ips = internalIps(kubectl);
    for (const n of nodes.items) {
      const node = n.metadata?.name ?? "";
      assert.deepEqual(ips[node]?.map(familyOf), ["IPv4", "IPv6"], `${node} InternalIPs`);
      assert.deepEqual((n.spec?.podCIDRs ?? []).map(familyOf), ["IPv4", "IPv6"], `${node} podCIDRs`);
    }
    const pods = JSON.parse(kubectl("get", "pods", "-A", "-o", "json")) as { items: Pod[] };
    // The pods of the pod network (not the node's own, hostNetwork ones): the stack's and the web pod.
    const podNetwork = pods.items.filter((p) => !p.spec?.hostNetwork && p.status?.phase === "Running");
    assert.ok(
      podNetwork.some((p) => p.metadata?.name?.startsWith("web-")),
      "the web pod among them",
    );
    for (const p of podNetwork) {
      const podIps = (p.status?.podIPs ?? []).map((x) => x.ip ?? "");
      assert.deepEqual(podIps.map(familyOf), ["IPv4", "IPv6"], `${p.metadata?.name}: ${podIps.join(" ")}`);
      const cidrs = nodes.items.find((n) => n.metadata?.name === p.spec?.nodeName)?.spec?.podCIDRs ?? [];
      for (const [i, ip] of podIps.entries()) assert.ok(contains(cidrs[i] ?? "", ip), `${ip} in ${cidrs[i]}`);
    }
  });

  test("dual-stack: a RequireDualStack Service answers on both ClusterIPs and a node's IPv6 NodePort, from a pod and the host; a slice per family; DNS answers A and AAAA", async () => {
    // Over the NodePort test's web pod (on the first worker); the client pod runs on the second.
    const service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web-dual" },
      spec: {
        type: "NodePort",
        ipFamilyPolicy: "RequireDualStack",
        selector: { app: "web" },
        ports: [{ port: 80, targetPort: 8080 }],
      },
    };
    writeFileSync(join(dir, "web-dual.json"), JSON.stringify(service));
    kubectl("apply", "-f", join(dir, "web-dual.json"));
    const svc = JSON.parse(kubectl("get", "service", "web-dual", "-o", "json")) as Service;
    const [v4 = "", v6 = ""] = svc.spec?.clusterIPs ?? [];
    assert.deepEqual([v4, v6].map(familyOf), ["IPv4", "IPv6"]);
    assert.ok(contains("fd00:10:96::/112", v6), v6);
    const nodePort = svc.spec?.ports?.[0]?.nodePort ?? 0;
    // The control-plane node's IPv6 address: neither the client's node nor the web pod's.
    const nodeV6 = internalIps(kubectl)[`${name}-control-plane`]?.[1] ?? "";
    const targets = { v4: hostPort(v4, 80), v6: hostPort(v6, 80), nodePortV6: hostPort(nodeV6, nodePort) };
    const flags = ["--overrides", JSON.stringify({ spec: { nodeName: `${name}-worker2` } })];
    const fromPod = runProbe(kubectl, "dual-probe", probeImage, httpGetAll(targets), flags) as {
      answers: unknown;
    };
    assert.deepEqual(fromPod.answers, { v4: "web", v6: "web", nodePortV6: "web" }, "from a pod");
    const fromHost = await new Promise((ok) => {
      const child = spawn(process.execPath, ["-e", httpGetAll({ nodePortV6: targets.nodePortV6 })], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("close", () => ok((JSON.parse(out) as { answers: unknown }).answers));
    });
    assert.deepEqual(fromHost, { nodePortV6: "web" }, "the IPv6 NodePort from this machine");
    // Each family's rules are our proxy's own: iptables for one, ip6tables for the other.
    const worker = `${name}-worker`;
    const nat = (cmd: string) => docker(engine, ["exec", worker, cmd, "-t", "nat"]);
    assert.match(nat("iptables-save"), new RegExp(`-d ${v4}/32 .*default/web-dual`));
    assert.match(nat("ip6tables-save"), new RegExp(`-d ${v6}/128 .*default/web-dual`));

    const slices = await eventually("a slice per family with the web pod", async () => {
      const l = JSON.parse(
        kubectl(
          ...["get", "endpointslices", "-l", "kubernetes.io/service-name=web-dual"],
          ...["-o", "json", "--show-managed-fields"],
        ),
      ) as { items: EndpointSlice[] };
      return l.items.filter((x) => (x.endpoints ?? []).length > 0).length === 2 ? l.items : undefined;
    });
    assert.deepEqual(slices.map((x) => x.addressType).sort(), ["IPv4", "IPv6"]);
    assert.ok(slices.every(writtenByOurController), "both slices our controller's");
    const dns = runProbe(kubectl, "dual-dns", probeImage, lookupBoth("web-dual.default.svc.cluster.local"));
    assert.deepEqual(dns, { a: [v4], aaaa: [v6] });
    kubectl("delete", "service", "web-dual", "--wait=true");
  });

  test("a scenario runs on kind as on netns: hints, with its claims measured through the nodes and pods", async () => {
    const exec = spawnExec(join(dir, "logs", "kind-commands.log"));
    const loadImages = kindWorkloadImages(
      exec,
      tools,
      name,
      repoRoot,
      join(dir, "logs", "kind-commands.log"),
    );
    const report = await runScenario(
      dir,
      hints,
      { connections: "60", "c13-connections": "400" },
      {
        docker: tools.docker,
        loadImages,
      },
    );
    // C6: traffic followed the hints, counted from each worker (docker exec); C9: a pod made unready from inside
    // its own network namespace (nsenter) lost its traffic; C13: the iptables spread is uniform.
    for (const claim of ["C6", "C9", "C13"]) {
      const f = finding(report, claim);
      assert.equal(f.verdict, "holds", `${claim}: ${f.measured}`);
    }
    assert.match(
      report.lines.join("\n"),
      new RegExp(`2 nodes \\(${name}-worker/zone-a, ${name}-worker2/zone-b\\)`),
    );
  });

  test("scale on kind: both modes measured from a client pod's own Node (crictl exec), atomicity in a node", async () => {
    const exec = spawnExec(join(dir, "logs", "kind-commands.log"));
    const loadImages = kindWorkloadImages(
      exec,
      tools,
      name,
      repoRoot,
      join(dir, "logs", "kind-commands.log"),
    );
    const report = await runScenario(
      dir,
      scale,
      { services: "50", partials: "2", connects: "20" },
      { docker: tools.docker, loadImages },
    );
    assert.equal(
      finding(report, "C22").verdict,
      "holds",
      "the bad transaction rejected in the node's scratch netns",
    );
    assert.match(finding(report, "C21").measured, /numgen random mod \d+/);
    const table = report.lines.filter((l) => /^50 +(iptables|nftables) /.test(l));
    assert.equal(table.length, 2, "one row per mode");
    for (const row of table) assert.doesNotMatch(row, /no first sync|no result/);
    // Twenty timed connects to the first and the last Service in each mode, from inside the client pod.
    const samples = report.lines.filter((l) => /first packet \(connect, µs\) .*\(n=20\)$/.test(l));
    assert.equal(samples.length, 2, report.lines.join("\n"));
  });

  test("migrate one worker to nftables under traffic, then --all: no leftovers, a report with numbers", async () => {
    const exec = spawnExec(join(dir, "logs", "kind-commands.log"));
    const lab = () =>
      kindMigrateLab(
        dir,
        tools,
        kindWorkloadImages(exec, tools, name, repoRoot, join(dir, "logs", "kind-commands.log")),
      );
    const quiet = { write: () => true };
    const first = `${name}-worker`;
    const one = await migrate({
      stateDir: dir,
      to: "nftables",
      nodes: [first],
      lab: await lab(),
      out: quiet,
    });
    console.log(`# migrate ${first} (kind):\n${formatReport(one)}`);
    const sw = one.switches[0];
    assert.ok(sw, "one switch");
    assert.equal(sw.from, "iptables");
    assert.equal(sw.leftovers, 0);
    assert.ok(sw.rulesBefore.iptablesNft > 0, "iptables rules before");
    assert.equal(sw.rulesAfter.iptablesLegacy + sw.rulesAfter.iptablesNft, 0);
    assert.ok(sw.rulesAfter.nftables > 0, "nftables rules after");
    assert.ok(sw.syncBeforeMs !== undefined && sw.syncAfterMs !== undefined, "sync times from both proxies");
    // A traffic generator on each worker (the control-plane node takes no ordinary pods), both counted.
    assert.deepEqual(Object.keys(sw.traffic).sort(), [first, `${name}-worker2`]);
    for (const t of Object.values(sw.traffic)) assert.ok(t.tcp.attempts > 0 && t.dns.attempts > 0);
    // The new proxy programs nftables before it removes the iptables rules: nothing may fail.
    assert.deepEqual(switchFailures(sw), [], `failed while ${first} switched`);

    const all = await migrate({ stateDir: dir, to: "nftables", lab: await lab(), out: quiet });
    console.log(`# migrate --all (kind):\n${formatReport(all)}`);
    assert.deepEqual(all.skipped, [first], "the node already in nftables mode is left alone");
    assert.deepEqual(all.switches.map((s) => s.node).sort(), [`${name}-control-plane`, `${name}-worker2`]);
    for (const s of all.switches) {
      assert.equal(s.leftovers, 0, `${s.node}: iptables leftovers`);
      assert.ok(s.rulesAfter.nftables > 0, `${s.node}: nftables rules`);
      assert.deepEqual(switchFailures(s), [], `failed while ${s.node} switched`);
    }
  });

  test("migrate one worker to ebpf under traffic: a ClusterIP and a NodePort answer through it, from a pod and the host", async () => {
    const started = Date.now();
    const exec = spawnExec(join(dir, "logs", "kind-commands.log"));
    const lab = await kindMigrateLab(
      dir,
      tools,
      kindWorkloadImages(exec, tools, name, repoRoot, join(dir, "logs", "kind-commands.log")),
    );
    const node = `${name}-worker2`;
    const report = await migrate({
      stateDir: dir,
      to: "ebpf",
      nodes: [node],
      lab,
      out: { write: () => true },
    });
    console.log(`# migrate ${node} to ebpf (kind):\n${formatReport(report)}`);
    const sw = report.switches[0];
    assert.ok(sw, "one switch");
    assert.equal(sw.from, "nftables");
    assert.ok(sw.rulesBefore.nftables > 0, "nftables rules before");
    assert.equal(sw.rulesBefore.bpf, 0, "no pins before");
    assert.equal(sw.leftovers, 0, "no iptables or nftables rules of ours left");
    assert.ok((sw.rulesAfter.bpf ?? 0) > 0, "ebpf mode's pins in the node's own bpffs");
    assert.deepEqual(Object.keys(sw.traffic).sort(), [`${name}-worker`, node]);
    for (const t of Object.values(sw.traffic)) assert.ok(t.tcp.attempts > 0 && t.dns.attempts > 0);
    assert.deepEqual(switchFailures(sw), [], `failed while ${node} switched`);

    // The web pod (the NodePort test's) runs on the other worker: every answer below crossed a node.
    const clusterIp = kubectl("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}");
    const nodePort = kubectl("get", "service", "web", "-o", "jsonpath={.spec.ports[0].nodePort}");
    const nodeIp = internalIps(kubectl)[node]?.[0];
    const targets = { clusterIp: `${clusterIp}:80`, nodePort: `${nodeIp}:${nodePort}` };
    const want = { clusterIp: "web", nodePort: "web" };
    // lb list opens the node's pins from this machine, through the node container's root (/proc/PID/root).
    const listed = await runMain(["lb", "list", "--node", node, "--state-dir", dir]);
    assert.equal(listed.code, 0, listed.stdout + listed.stderr);
    assert.match(
      listed.stdout,
      new RegExp(`^${node}: ebpf mode, maps pinned under /proc/\\d+/root/sys/fs/bpf/switchyard$`, "m"),
    );
    assert.match(
      listed.stdout,
      new RegExp(
        `^${clusterIp.replaceAll(".", "\\.")}:80/TCP +0\\.0\\.0\\.0:0 \\(\\d+\\) \\(0\\) \\[ClusterIP[^\\]]*\\]\n +\\d+\\.\\d+\\.\\d+\\.\\d+:\\d+/TCP`,
        "m",
      ),
      listed.stdout,
    );
    // A pod of the node: its connects are balanced by the socket programs on the node container's cgroup.
    const flags = ["--overrides", JSON.stringify({ spec: { nodeName: node } })];
    const fromPod = runProbe(kubectl, "ebpf-probe", probeImage, httpGetAll(targets), flags) as {
      answers: unknown;
    };
    assert.deepEqual(fromPod.answers, want, "from a pod on the ebpf node");
    // The node itself (a `docker exec` runs in the node container's cgroup), then this machine: from outside
    // the node, so the NodePort goes through the tc program on its interface.
    for (const [what, target] of Object.entries(targets)) {
      const body = docker(engine, ["exec", node, "curl", "-s", "--max-time", "3", `http://${target}/`]);
      assert.match(body, /^web-/, `${what} from ${node} itself`);
    }
    const fromHost = await new Promise((ok) => {
      const child = spawn(process.execPath, ["-e", httpGetAll({ nodePort: targets.nodePort })], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("close", () => ok((JSON.parse(out) as { answers: unknown }).answers));
    });
    assert.deepEqual(fromHost, { nodePort: "web" }, "the NodePort from this machine");
    console.log(`# ebpf on ${node}: ${((Date.now() - started) / 1000).toFixed(1)} s (migration and checks)`);
  });

  test("down removes every container, volume and network of the cluster", async () => {
    await kindDown(dir);
    const left = docker(engine, ["ps", "-a", "--filter", `label=io.x-k8s.kind.cluster=${name}`, "-q"]);
    assert.equal(left, "", "no node container left");
    // kind's network goes too, unless something else (another kind cluster) is still on it.
    const others = docker(engine, ["ps", "-a", "-q", "--filter", "network=kind"]);
    const network = docker(engine, ["network", "ls", "-q", "--filter", "name=^kind$"]);
    if (others === "") assert.equal(network, "", "kind's network removed");
    const volumes = docker(engine, ["volume", "ls", "-q", "--filter", "dangling=true"]).split("\n");
    assert.deepEqual(
      volumes.filter((v) => v && !volumesBefore.has(v)),
      [],
      "no volume left by the nodes",
    );
  });
});
