import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { ApiError, type HttpRestClient, patchContentTypes } from "@switchyard/kube";
import { eventually, sleep } from "@switchyard/kube/testing";
import { resolveBinary } from "@switchyard/testbed";
import { adminCredentials, labClient } from "@switchyard/testbed/controlplane";
import type { Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { migrate } from "../../src/migrate/migrate.js";
import { formatReport, type NodeSwitch, switchFailures } from "../../src/migrate/report.js";
import { labDown } from "../../src/netns/lab-down.js";
import { type LabState, labPaths } from "../../src/netns/state.js";
import { writtenByOurController } from "../../src/stack/deploy.js";
import { inCgroup, labCgroup, labPinDir } from "../../src/stack/ebpf-places.js";
import { echoAndClient, sh, shIn, stackLabSkip, upTestLab } from "./test-lab.js";

// Its own prefix and networks, so other labs on this host are left alone.
const lab = { prefix: "sys", nodes: 3, zones: 2, nodeCidr: "198.18.8.0/24", clusterCidr: "10.249.0.0/16" };
const skip = stackLabSkip();

const execFileAsync = promisify(execFile);

/**
 * One A query from an unconnected UDP socket, printed as JSON: where the answer came from as the application reads
 * it (recvfrom's address) and the answer's last four bytes as an address (the A record of a one-answer reply).
 */
const UDP_QUERY = `
const dgram = require("node:dgram");
const [server, name] = process.argv.slice(1);
const labels = name.split(".").map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
const query = Buffer.concat([Buffer.from([0x5a, 0x17, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), ...labels, Buffer.from([0, 0, 1, 0, 1])]);
const s = dgram.createSocket("udp4");
const timer = setTimeout(() => { console.log(JSON.stringify({ from: "", last4: "" })); process.exit(0); }, 2000);
s.on("message", (m, r) => {
  clearTimeout(timer);
  console.log(JSON.stringify({ from: r.address + ":" + r.port, last4: [...m.subarray(-4)].join(".") }));
  s.close();
});
s.send(query, 53, server);
`;
/** The proxy programs the new mode before removing the old one's rules, so no connection or lookup may fail. */
const assertNoFailures = (sw: NodeSwitch) =>
  assert.deepEqual(switchFailures(sw), [], `failed while ${sw.node} switched to ${sw.to}`);

const isReady = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
const hasEndpoints = (s: EndpointSlice) => (s.endpoints ?? []).length > 0;

const ourNetns = () =>
  sh(["ip", "netns", "list"])
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter((n) => n.startsWith(`${lab.prefix}-`));

describe("the stack from manifests, and the migration iptables → nftables → ebpf → iptables", {
  skip,
}, () => {
  let dir: string;
  let state: LabState;
  let client: HttpRestClient;
  const ns = "stack-e2e";
  let clientNetns = "";
  let clientNode = "";

  const webSlices = async () =>
    (
      await client.call<{ items: EndpointSlice[] }>(
        "GET",
        `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb`,
      )
    ).items;
  /** dig +short from the client pod; retried, since a single UDP query may be lost. */
  const lookup = (server: string, name: string) =>
    eventually(`${name} from ${server}`, async () => {
      const out = shIn(clientNetns, ["dig", `@${server}`, "+short", "+time=2", "+tries=1", name]).trim();
      return out ? out : undefined;
    });
  /**
   * Looks `name` up through kube-dns from the client pod until stopped, one lookup at a time, as an
   * application's resolver would (glibc's defaults: 5 s per try, 2 tries). Returns what failed, and when.
   */
  const lookupLoop = (name: string) => {
    let running = true;
    let attempted = 0;
    const failed: string[] = [];
    const loop = (async () => {
      while (running) {
        attempted++;
        const args = [
          "netns",
          "exec",
          clientNetns,
          "dig",
          `@${state.plan.dnsIp}`,
          "+short",
          "+time=5",
          "+tries=2",
          name,
        ];
        const out = await execFileAsync("ip", args, { encoding: "utf8" }).then(
          (r) => r.stdout.trim(),
          (e) => `error ${e}`,
        );
        if (!/^\d+\.\d+\.\d+\.\d+$/.test(out))
          failed.push(`${new Date().toISOString()} ${out || "no answer"}`);
        await sleep(200);
      }
    })();
    return {
      stop: async () => {
        running = false;
        await loop;
        return { attempted, failed: [...failed] };
      },
    };
  };
  const fetchInNetns = (ip: string, port: number, path: string) =>
    shIn(clientNetns, ["curl", "-s", "--max-time", "3", `http://${ip}:${port}${path}`]).trim();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-stack-"));
    state = await upTestLab(dir, lab, { stack: "iptables", readyTimeoutMs: 240_000 });
    console.log(
      `# lab with the stack up in ${state.upSeconds?.toFixed(1)}s (nodes ${state.nodesSeconds?.toFixed(1)}s)`,
    );
    client = labClient(adminCredentials(state.server, labPaths(dir).controlPlane));
    const started = await echoAndClient(client, lab.prefix, ns);
    clientNode = started.pod.spec?.nodeName ?? "";
    clientNetns = started.netns;
  });

  /** Loops still running when a test failed midway; stopped before the lab goes down. */
  const loops: { stop(): Promise<unknown> }[] = [];

  after(async () => {
    for (const loop of loops) await loop.stop();
    client?.close();
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("up brings the stack up while the nodes finish, and no pod of it restarts on the way", async () => {
    // The stack runs while the nodes finish; a pod that dialled the apiserver's ClusterIP before its node's proxy
    // had the rule would hang and restart (the slice controller's start-up check exits after 10 s).
    const pods = await client.call<{ items: Pod[] }>("GET", "/api/v1/namespaces/kube-system/pods");
    const restarted = pods.items.flatMap((p) =>
      (p.status?.containerStatuses ?? [])
        .filter((c) => c.restartCount > 0)
        .map((c) => `${p.metadata?.name}/${c.name}: ${c.restartCount}`),
    );
    assert.deepEqual(restarted, []);
    assert.equal(pods.items.filter(isReady).length, 3 + 2 + 2, "3 proxies, 2 controllers, 2 DNS pods Ready");
    const stepsOf = new Map((state.steps ?? []).map((t) => [t.step, t]));
    for (const step of ["pod CIDRs allocated", "nodes Ready", "the stack"])
      assert.ok(stepsOf.get(step), step);
  });

  test("a ClusterIP Service answers from a pod, through our proxy's rules", async () => {
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/echo`);
    const ip = svc.spec?.clusterIP ?? "";
    const answer = await eventually("an answer from the ClusterIP", async () => {
      const out = shIn(clientNetns, [
        "timeout",
        "3",
        "bash",
        "-c",
        `exec 3<>/dev/tcp/${ip}/9000 && head -1 <&3`,
      ]);
      return out.startsWith("echo-") ? out : undefined;
    });
    assert.match(
      answer,
      /^echo-\S+ (::ffff:)?10\.249\./,
      "the echo server sees the client pod's own address",
    );
    const node = state.plan.nodeList.find((n) => n.name === clientNode);
    const nat = shIn(node?.netns ?? "", ["iptables-save", "-t", "nat"]);
    assert.ok(
      nat.includes(`-d ${ip}/32`) && nat.includes("KUBE-SVC-"),
      "the node's KUBE-SERVICES has the ClusterIP",
    );
  });

  test("a NodePort on another node answers", async () => {
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/echo`);
    const port = svc.spec?.ports?.[0]?.nodePort;
    const other = state.plan.nodeList.find((n) => n.name !== clientNode);
    assert.ok(port && other);
    const answer = await eventually("an answer from the NodePort", async () => {
      const out = shIn(clientNetns, [
        "timeout",
        "3",
        "bash",
        "-c",
        `exec 3<>/dev/tcp/${other.ip}/${port} && head -1 <&3`,
      ]);
      return out.startsWith("echo-") ? out : undefined;
    });
    assert.match(answer, /^echo-/);
  });

  test("DNS through the kube-dns ClusterIP resolves the Service's name", async () => {
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/echo`);
    const out = await eventually("an A record", async () => {
      const a = shIn(clientNetns, [
        "dig",
        `@${state.plan.dnsIp}`,
        "+short",
        "+time=2",
        "+tries=1",
        `echo.${ns}.svc.cluster.local`,
      ]).trim();
      return a ? a : undefined;
    });
    assert.equal(out, svc.spec?.clusterIP);
    // `ip netns exec` alone does not see the sandbox's mounts; the pod's resolv.conf is in its folder.
    const pods = labPaths(dir).pods;
    const podDir = readdirSync(pods).find((d) => d.startsWith(`${ns}_client_`)) ?? "";
    assert.match(readFileSync(join(pods, podDir, "resolv.conf"), "utf8"), /^nameserver 10\.96\.0\.10$/m);
  });

  test("Services with no endpoints or no ports: DNS keeps answering and a new DNS pod becomes Ready", async () => {
    // The user sequence of issue 11: a Service whose pods are all gone gets the placeholder slice, which the
    // apiserver sends back as "endpoints": null, "ports": null; a portless headless Service gets slices with
    // "ports": null. A DNS pod started after that used to stay unready, failing its list on the nulls.
    const lookups = lookupLoop(`echo.${ns}.svc.cluster.local`);
    loops.push(lookups);
    const labels = { app: "web" };
    await client.call("POST", `/apis/apps/v1/namespaces/${ns}/deployments`, {
      metadata: { name: "web" },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: "web", image: "switchyard/echo" }] } },
      },
    });
    await client.call("POST", `/api/v1/namespaces/${ns}/services`, {
      metadata: { name: "web" },
      spec: { selector: labels, ports: [{ port: 9000, targetPort: 9000, protocol: "TCP" }] },
    });
    await client.call("POST", `/api/v1/namespaces/${ns}/services`, {
      metadata: { name: "portless" },
      spec: { clusterIP: "None", selector: { app: "echo" } },
    });
    await eventually("a ready endpoint for web", async () =>
      (await webSlices()).some(hasEndpoints) ? true : undefined,
    );
    await client.call(
      "PATCH",
      `/apis/apps/v1/namespaces/${ns}/deployments/web`,
      { spec: { replicas: 0 } },
      patchContentTypes.merge,
    );
    await eventually("only the placeholder slice for web", async () => {
      const slices = await webSlices();
      return slices.length === 1 && !slices.some(hasEndpoints) ? true : undefined;
    });

    const dns = await client.call<{ items: Pod[] }>(
      "GET",
      "/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dkube-dns",
    );
    const before = new Set(dns.items.map((p) => p.metadata?.name));
    const victim = dns.items[0]?.metadata?.name ?? "";
    await client.call("DELETE", `/api/v1/namespaces/kube-system/pods/${victim}`);
    const replacement = await eventually(
      "a new DNS pod Ready",
      async () => {
        const now = await client.call<{ items: Pod[] }>(
          "GET",
          "/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dkube-dns",
        );
        return now.items.find((p) => !before.has(p.metadata?.name) && isReady(p));
      },
      { timeoutMs: 120_000 },
    );

    // The new pod itself answers: a name with endpoints, the Service with none (its ClusterIP), and the
    // portless headless Service (its pods' addresses); and so does the kube-dns Service.
    const podIp = replacement.status?.podIP ?? "";
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/web`);
    const echoPods = await client.call<{ items: Pod[] }>(
      "GET",
      `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Decho`,
    );
    const echoIps = echoPods.items.map((p) => p.status?.podIP ?? "").sort();
    for (const server of [podIp, state.plan.dnsIp]) {
      assert.equal(
        await lookup(server, `web.${ns}.svc.cluster.local`),
        svc.spec?.clusterIP,
        `web via ${server}`,
      );
      assert.deepEqual(
        (await lookup(server, `portless.${ns}.svc.cluster.local`)).split("\n").sort(),
        echoIps,
        `portless via ${server}`,
      );
    }
    const ready = await fetchInNetns(podIp, 8181, "/ready");
    assert.equal(ready, "OK");
    const { attempted, failed } = await lookups.stop();
    console.log(
      `# lookups of echo through kube-dns during the sequence: ${failed.length} failed of ${attempted}`,
    );
    assert.ok(attempted > 0);
    assert.deepEqual(failed, [], "every lookup answered (with glibc's default timeout:5 attempts:2)");
    await client.call("DELETE", `/apis/apps/v1/namespaces/${ns}/deployments/web`);
    for (const name of ["web", "portless"])
      await client.call("DELETE", `/api/v1/namespaces/${ns}/services/${name}`);
  });

  test("the EndpointSlices were written by our slice controller", async () => {
    const list = await eventually("a slice with both endpoints", async () => {
      const l = await client.call<{ items: EndpointSlice[] }>(
        "GET",
        `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Decho`,
      );
      return l.items.flatMap((s) => s.endpoints ?? []).length === 2 ? l : undefined;
    });
    assert.ok(list.items.length > 0 && list.items.every(writtenByOurController));
  });

  test("kubectl drain of a node with a DNS pod respects the coredns PodDisruptionBudget, one eviction at a time", async () => {
    const dnsPods = async () =>
      (
        await client.call<{ items: Pod[] }>(
          "GET",
          "/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dkube-dns",
        )
      ).items;
    const pdbPath = "/apis/policy/v1/namespaces/kube-system/poddisruptionbudgets/coredns";
    type Budget = {
      status?: { disruptionsAllowed?: number; currentHealthy?: number; expectedPods?: number };
    };
    // kube-controller-manager's disruption controller counts the healthy pods: one may go.
    const fullBudget = () =>
      eventually("the budget allowing one disruption", async () => {
        const st = (await client.call<Budget>("GET", pdbPath)).status;
        const pods = await dnsPods();
        return (
          st?.disruptionsAllowed === 1 && st.currentHealthy === 2 && pods.length === 2 && pods.every(isReady)
        );
      });
    await fullBudget();
    const [first, second] = await dnsPods();
    assert.ok(first && second);
    const evict = (p: Pod) =>
      client.call("POST", `/api/v1/namespaces/kube-system/pods/${p.metadata?.name}/eviction`, {
        apiVersion: "policy/v1",
        kind: "Eviction",
        metadata: { name: p.metadata?.name, namespace: "kube-system" },
      });
    // The first eviction spends the budget; the second is refused while the first pod's replacement is not Ready.
    await evict(first);
    const refused = await evict(second).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(refused instanceof ApiError, "the second eviction is refused");
    assert.equal(refused.code, 429, refused.message);
    assert.match(refused.message, /disruption budget/);
    // Drain the second pod's node at once (only the DNS pods: the test's own pods there are not the subject):
    // kubectl evicts, is refused while the budget is spent, retries every 5 s, and returns once the pod is gone.
    const node = second.spec?.nodeName ?? "";
    const kubectl = resolveBinary("kubectl").path ?? "kubectl";
    const kubeconfig = join(labPaths(dir).controlPlane, "admin.kubeconfig");
    const drain = ["drain", node, "--pod-selector", "k8s-app=kube-dns", "--timeout", "150s"];
    const drained = await execFileAsync(kubectl, ["--kubeconfig", kubeconfig, ...drain], {
      encoding: "utf8",
    }).finally(() => execFileAsync(kubectl, ["--kubeconfig", kubeconfig, "uncordon", node]));
    const text = `${drained.stdout}${drained.stderr}`;
    console.log(text.trim().replace(/^/gm, "# drain: "));
    assert.match(text, /would violate the pod's disruption budget/, "the drain waited for the budget");
    assert.match(text, new RegExp(`node/${node} drained`));
    // The agent honoured both evictions as a kubelet does: both pods terminated and went, and two new ones serve.
    await fullBudget();
    const names = (await dnsPods()).map((p) => p.metadata?.name);
    assert.ok(
      !names.includes(first.metadata?.name) && !names.includes(second.metadata?.name),
      names.join(" "),
    );
  });

  test("migrate one node to nftables under traffic: no leftovers, a report with numbers", async () => {
    const node = state.plan.nodeList[0];
    assert.ok(node);
    const report = await migrate({
      stateDir: dir,
      to: "nftables",
      nodes: [node.name],
      out: { write: () => {} },
    });
    console.log(formatReport(report).replace(/^/gm, "# "));
    const sw = report.switches[0];
    assert.ok(sw, "one switch");
    assert.equal(sw.from, "iptables");
    assert.equal(sw.leftovers, 0);
    assert.equal(sw.rulesAfter.iptablesLegacy + sw.rulesAfter.iptablesNft, 0);
    assert.ok(sw.rulesBefore.iptablesLegacy + sw.rulesBefore.iptablesNft > 0, "iptables rules before");
    assert.ok(sw.rulesAfter.nftables > 0, "nftables rules after");
    assert.ok(sw.syncBeforeMs !== undefined && sw.syncAfterMs !== undefined, "sync times from both proxies");
    assert.equal(Object.keys(sw.traffic).length, lab.nodes, "traffic counted on every node");
    for (const t of Object.values(sw.traffic)) assert.ok(t.tcp.attempts > 0 && t.dns.attempts > 0);
    assertNoFailures(sw);
    // The other nodes stayed on iptables.
    const other = state.plan.nodeList[1];
    assert.ok(other && shIn(other.netns, ["iptables-save", "-t", "nat"]).includes("KUBE-SERVICES"));
  });

  test("migrate --all moves the remaining nodes to nftables", async () => {
    const all = await migrate({ stateDir: dir, to: "nftables", out: { write: () => {} } });
    console.log(formatReport(all).replace(/^/gm, "# "));
    const first = state.plan.nodeList[0]?.name ?? "";
    assert.deepEqual(all.skipped, [first], "the node already in nftables mode is left alone");
    assert.equal(all.switches.length, lab.nodes - 1);
    for (const sw of all.switches) {
      assert.equal(sw.leftovers, 0, `${sw.node}: iptables leftovers`);
      assert.ok(sw.rulesAfter.nftables > 0 && sw.rulesAfter.iptablesLegacy + sw.rulesAfter.iptablesNft === 0);
      assertNoFailures(sw);
    }
  });

  /** The client pod's node, in ebpf mode below: a probe from the client joins that node's cgroup first. */
  const clientPlan = () => {
    const node = state.plan.nodeList.find((n) => n.name === clientNode);
    assert.ok(node?.cgroup && node.pinRoot, "the client's node has a cgroup and a pin folder");
    return { ...node, cgroup: node.cgroup, pinRoot: node.pinRoot };
  };
  const inClient = (argv: string[]) =>
    sh([...inCgroup(clientPlan().cgroup), "ip", "netns", "exec", clientNetns, ...argv]);
  const attached = () =>
    (
      JSON.parse(sh(["bpftool", "-j", "cgroup", "show", clientPlan().cgroup]).trim() || "[]") as {
        name: string;
      }[]
    )
      .map((p) => p.name)
      .sort();

  test("the client's node goes nftables → ebpf under traffic: no rules left, its programs on the node's cgroup", async () => {
    const report = await migrate({
      stateDir: dir,
      to: "ebpf",
      nodes: [clientNode],
      out: { write: () => {} },
    });
    console.log(formatReport(report).replace(/^/gm, "# "));
    const sw = report.switches[0];
    assert.ok(sw, "one switch");
    assert.equal(sw.from, "nftables");

    assert.equal(sw.leftovers, 0);
    assert.deepEqual(
      [sw.rulesAfter.iptablesLegacy, sw.rulesAfter.iptablesNft, sw.rulesAfter.nftables],
      [0, 0, 0],
      "no iptables or nftables rules in the node",
    );
    assert.ok((sw.rulesAfter.bpf ?? 0) > 0, "programs attached and pinned");
    assert.equal(Object.keys(sw.traffic).length, lab.nodes, "traffic counted on every node");
    for (const t of Object.values(sw.traffic)) assert.ok(t.tcp.attempts > 0 && t.dns.attempts > 0);
    assertNoFailures(sw);
    assert.deepEqual(attached(), ["connect4", "getpeername4", "recvmsg4", "sendmsg4"]);
    assert.ok(
      existsSync(join(clientPlan().pinRoot, "links", "connect4")),
      "the link pinned in the node's folder",
    );
    const root = clientPlan().pinRoot;
    const pinned = sh(["find", root, "-mindepth", "1", "-not", "-type", "d"]).trim().split("\n");
    const names = pinned.map((p) => p.slice(root.length + 1)).sort();
    console.log(`# ${clientNode}: ${attached().length} programs on its cgroup; pinned: ${names.join(" ")}`);
  });

  test("in ebpf mode a pod reaches a Service backed on another node, DNS answers from the kube-dns ClusterIP, the host reaches a NodePort", async () => {
    // One echo pod on another node, behind a Service of its own: whatever answers came through that node.
    const other = state.plan.nodeList.find((n) => n.name !== clientNode)?.name ?? "";
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: "far", labels: { app: "far" } },
      spec: { nodeName: other, containers: [{ name: "echo", image: "switchyard/echo" }] },
    });
    await client.call("POST", `/api/v1/namespaces/${ns}/services`, {
      metadata: { name: "far" },
      spec: { selector: { app: "far" }, ports: [{ port: 9000, protocol: "TCP" }] },
    });
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/far`);
    const ip = svc.spec?.clusterIP ?? "";
    const answer = await eventually("an answer from far's ClusterIP", async () => {
      const out = inClient(["timeout", "3", "bash", "-c", `exec 3<>/dev/tcp/${ip}/9000 && head -1 <&3`]);
      return out.startsWith("far ") ? out.trim() : undefined;
    });
    assert.match(
      answer,
      /^far (::ffff:)?10\.249\./,
      "the echo on the other node sees the client pod's address",
    );
    // An unconnected UDP socket: the query is sent to a DNS pod (sendmsg), and the answer reads as the ClusterIP's
    // (recvmsg), or the resolver would drop it.
    const query = (name: string) => {
      const out = inClient([process.execPath, "-e", UDP_QUERY, state.plan.dnsIp, name]);
      return JSON.parse(out) as { from: string; last4: string };
    };
    const reply = await eventually("a DNS answer", async () => {
      const r = query(`far.${ns}.svc.cluster.local`);
      return r.last4 === ip ? r : undefined;
    });
    assert.equal(reply.from, `${state.plan.dnsIp}:53`, "the answer reads as coming from the ClusterIP");
    // From the host, outside every node's cgroup: the node's tc program takes the NodePort.
    const echo = await client.call<Service>("GET", `/api/v1/namespaces/${ns}/services/echo`);
    const nodePort = echo.spec?.ports?.[0]?.nodePort;
    const fromHost = await eventually("an answer from the ebpf node's NodePort", async () => {
      const target = `/dev/tcp/${clientPlan().ip}/${nodePort}`;
      const out = sh(["timeout", "3", "bash", "-c", `exec 3<>${target} && head -1 <&3`]);
      return out.startsWith("echo-") ? out : undefined;
    });
    assert.match(fromHost, /^echo-/);
  });

  test("then ebpf → iptables under traffic: no program attached to the node's cgroup, no pin left", async () => {
    const report = await migrate({
      stateDir: dir,
      to: "iptables",
      nodes: [clientNode],
      out: { write: () => {} },
    });
    console.log(formatReport(report).replace(/^/gm, "# "));
    const sw = report.switches[0];
    assert.ok(sw, "one switch");
    assert.equal(sw.from, "ebpf");
    assert.equal(sw.leftovers, 0);
    assert.equal(sw.rulesAfter.bpf, 0, "no BPF program or pin counted");
    assert.ok(sw.rulesAfter.iptablesLegacy + sw.rulesAfter.iptablesNft > 0, "iptables rules");
    assertNoFailures(sw);
    assert.deepEqual(attached(), []);
    assert.ok(!existsSync(clientPlan().pinRoot), "the node's pin folder is gone");
    const node = clientPlan();
    assert.ok(shIn(node.netns, ["iptables-save", "-t", "nat"]).includes("KUBE-SERVICES"));
  });

  test("down leaves no namespace, link, process, cgroup, pin or host rule behind", async () => {
    client.close();
    const ebpf = state.plan.ebpf;
    await labDown(dir);
    assert.ok(ebpf, "the lab had ebpf places");
    assert.ok(!existsSync(labCgroup(ebpf)), "no cgroup of the lab");
    for (const folder of Object.values(state.plan.v1Limits ?? {}))
      assert.ok(!existsSync(folder), `no folder of the lab in a cgroup v1 hierarchy: ${folder}`);
    assert.ok(!existsSync(labPinDir(ebpf)), "no pin folder of the lab");
    assert.deepEqual(ourNetns(), []);
    assert.ok(!sh(["ip", "link", "show"]).includes(`${lab.prefix}-`), "no links");
    assert.ok(!sh(["ps", "-eo", "args"]).includes(dir), "no process of the lab");
    // Other tests on this host may change the root namespace's rules meanwhile; none may mention this lab.
    const hostRules = sh(["iptables-save"]) + sh(["nft", "list", "ruleset"]);
    for (const mark of ["198.18.8.", "10.249.", `${lab.prefix}-`])
      assert.ok(!hostRules.includes(mark), `a host rule mentions ${mark}`);
  });
});
