import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import yaml from "js-yaml";
import { kindUpSummary } from "../../src/cli/kind-up-summary.js";
import { kindEbpfPlaces } from "../../src/kind/ebpf-mounts.js";
import { kindDown } from "../../src/kind/lab-down.js";
import { kindLabUp } from "../../src/kind/lab-up.js";
import { kindPaths } from "../../src/kind/paths.js";
import type { KindClusterSpec } from "../../src/kind/provision.js";
import type { StepDeps } from "../../src/kind/run-steps.js";
import { readKindState } from "../../src/kind/state.js";
import { kubeDnsSliced } from "../../src/kind/steps.js";
import type { KindTools } from "../../src/kind/tools.js";
import { readLabRuntime } from "../../src/netns/state.js";
import { repoRoot } from "../../src/self.js";
import { stepTable } from "../../src/timing/step-times.js";

const tools: KindTools = { docker: "/bin/docker", kubectl: "/bin/kubectl" };
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const upstreamSlice = {
  metadata: {
    labels: { "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io" },
    managedFields: [{ manager: "kube-controller-manager" }],
  },
  endpoints: [{ addresses: ["10.244.1.3"], conditions: { ready: true } }],
};

const ourSlice = {
  metadata: {
    labels: { "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io" },
    managedFields: [{ manager: "switchyard-slice-controller" }],
  },
  endpoints: [{ addresses: ["10.244.1.2"], conditions: { ready: true } }],
};

/**
 * A fake machine: records every command (and the cluster's creation and image loads, as `provision ...` and
 * `load ...`), answers like docker and kubectl would, fails where told.
 */
function fakeMachine(
  failOn?: (argv: readonly string[]) => string | undefined,
  slices: object[] = [ourSlice],
  nodes = ["lab-control-plane", "lab-worker", "lab-worker2", "lab-worker3"],
) {
  const commands: string[][] = [];
  // Every command takes a few turns of the event loop, and is recorded when it starts and when it ends: what
  // runs at once shows as starts before the others' ends.
  const timeline: { argv: string[]; start: number; end: number }[] = [];
  let tick = 0;
  const takesTime = async (argv: string[]) => {
    commands.push(argv);
    const entry = { argv, start: tick++, end: -1 };
    timeline.push(entry);
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    entry.end = tick++;
  };
  const specs: KindClusterSpec[] = [];
  const deps: StepDeps = {
    provision: async (spec) => {
      specs.push(spec);
      await takesTime(["provision", spec.cluster.name, spec.image, ...spec.nodes.map((n) => n.name)]);
      writeFileSync(
        spec.kubeconfig,
        yaml.dump({
          "current-context": "kind-lab",
          contexts: [{ name: "kind-lab", context: { cluster: "kind-lab" } }],
          clusters: [{ name: "kind-lab", cluster: { server: "https://127.0.0.1:41234" } }],
        }),
      );
    },
    loadImages: async (images, into) => {
      await takesTime(["load", ...images, "into", ...into]);
    },
    exec: async (argv) => {
      await takesTime([...argv]);
      const why = failOn?.(argv);
      if (why) throw new Error(why);
      if (argv[1] === "ps" && argv.some((a) => a.startsWith("label=io.x-k8s.kind.cluster=")))
        return nodes.join("\n");
      if (argv.includes("endpointslices")) return JSON.stringify({ items: slices });
      if (argv.includes("http://127.0.0.1:10249/metrics"))
        return 'kubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family="IPv4"} 0.05\nkubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"} 1\n';
      if (argv.includes("nodes") && argv.includes("json"))
        return JSON.stringify({
          items: ["control-plane", "worker", "worker2", "worker3"].map((n, i) => ({
            metadata: { name: `lab-${n}` },
            spec: { podCIDR: `10.244.${i}.0/24` },
            status: { addresses: [{ type: "InternalIP", address: `172.18.0.${i + 2}` }] },
          })),
        });
      return "";
    },
    writeFile: (path, content) => writeFileSync(path, content),
    sleep: async () => {},
    now: Date.now,
  };
  // The command as a user reads it: program name and arguments, without the absolute paths.
  const briefOf = (c: string[]) =>
    c
      .map((a) =>
        a === process.execPath
          ? "node"
          : a.includes("\n")
            ? a.includes("systemctl enable")
              ? "<mounts>"
              : "<script>"
            : a.replace(repoRoot, "<repo>").replace(/^\/bin\//, ""),
      )
      .filter((a, i, all) => !(a === "--kubeconfig" || all[i - 1] === "--kubeconfig"))
      .join(" ");
  const brief = () => commands.map(briefOf);
  /** When the first command that starts with `prefix` started and ended, on the fake's own clock of events. */
  const span = (prefix: string) => {
    const found = timeline.find((t) => briefOf(t.argv).startsWith(prefix));
    if (!found) throw new Error(`no command starts with ${prefix}`);
    return found;
  };
  return { deps, commands, brief, span, specs };
}

function stateDir(): string {
  const d = mkdtempSync(join(tmpdir(), "kind-lab-test-"));
  dirs.push(d);
  return d;
}

const sink = { write: () => {} };

const nodes = "lab-control-plane lab-worker lab-worker2 lab-worker3";
const listNodes = "docker ps -a --filter label=io.x-k8s.kind.cluster=lab --format {{.Names}}";

/** `up` with Switchyard's stack in iptables mode, against a fake machine, in a fresh state folder. */
async function upOnFakeMachine() {
  const dir = stateDir();
  const m = fakeMachine();
  const state = await kindLabUp({
    stateDir: dir,
    input: { name: "lab" },
    stack: "iptables",
    tools,
    deps: m.deps,
    out: sink,
  });
  return { dir, m, state };
}

describe("kind up: the command plan against a fake machine", () => {
  test("builds, creates, loads, waits, replaces kubeadm's CoreDNS, applies, waits for the stack", async () => {
    const { dir, m, state } = await upOnFakeMachine();
    const paths = kindPaths(dir);
    // Every command once; the order (some run at once) is the next test's.
    assert.deepEqual(
      [...m.brief()].sort(),
      [
        "docker image inspect --format {{.Id}} kindest/node:v1.37.2",
        "node <repo>/scripts/images.mjs kube-proxy slice-controller cluster-dns echo loadgen",
        "docker tag switchyard/kube-proxy:dev switchyard/kube-proxy:0.1.0",
        "docker tag switchyard/slice-controller:dev switchyard/slice-controller:0.1.0",
        "docker tag switchyard/cluster-dns:dev switchyard/cluster-dns:0.1.0",
        "provision lab kindest/node:v1.37.2 lab-control-plane lab-worker lab-worker2 lab-worker3",
        // ebpf mode's mounts in every node, whatever the mode (kind/ebpf-mounts.ts); then the pod network.
        ...nodes.split(" ").map((n) => `docker exec ${n} sh -c <mounts>`),
        "kubectl get nodes -o json",
        "docker exec lab-control-plane sh -c <script>",
        "docker exec lab-worker sh -c <script>",
        "docker exec lab-worker2 sh -c <script>",
        "docker exec lab-worker3 sh -c <script>",
        `load switchyard/kube-proxy:0.1.0 switchyard/slice-controller:0.1.0 switchyard/cluster-dns:0.1.0 switchyard/echo:0.1.0 switchyard/loadgen:0.1.0 into ${nodes}`,
        "kubectl wait --for=condition=Ready nodes --all --timeout=300s",
        "kubectl -n kube-system delete deployment coredns --ignore-not-found --wait=true",
        `kubectl apply --server-side --force-conflicts --field-manager=switchyard-lab -f ${paths.proxyManifests}`,
        ...nodes
          .split(" ")
          .map((n) => `docker exec ${n} curl -s --max-time 2 http://127.0.0.1:10249/metrics`),
        `kubectl apply --server-side --force-conflicts --field-manager=switchyard-lab -f ${paths.manifests}`,
        "kubectl -n kube-system rollout status daemonset/kube-proxy --timeout=300s",
        "kubectl -n kube-system rollout status deployment/switchyard-slice-controller --timeout=300s",
        "kubectl -n kube-system rollout status deployment/coredns --timeout=300s",
        "kubectl -n kube-system get endpointslices -l kubernetes.io/service-name=kube-dns -o json --show-managed-fields",
      ].sort(),
    );
    // Every kubectl talks to the lab's own kubeconfig, and the cluster's is written there, not ~/.kube/config.
    for (const c of m.commands.filter((c) => c[0] === tools.kubectl))
      assert.equal(c[c.indexOf("--kubeconfig") + 1], paths.kubeconfig);
    const spec = m.specs[0];
    assert.equal(spec?.kubeconfig, paths.kubeconfig);
    // No kube-proxy from kubeadm and no upstream slice controllers; the nodes are the command's own (no Ryuk).
    assert.equal(spec?.cluster.kubeProxyMode, "none");
    assert.match(
      spec?.cluster.controllers ?? "",
      /-endpointslice-controller,-endpointslice-mirroring-controller$/,
    );
    assert.equal(spec?.reap, false);
    assert.deepEqual(
      spec?.nodes.map((n) => n.zone),
      ["zone-a", "zone-a", "zone-b", "zone-a"],
    );
    // The files the commands read are there, and are what the pure functions render.
    assert.match(readFileSync(paths.manifests, "utf8"), /image: switchyard\/kube-proxy:0.1.0/);
    const proxyFile = readFileSync(paths.proxyManifests, "utf8");
    assert.match(proxyFile, /image: switchyard\/kube-proxy:0.1.0/);
    assert.doesNotMatch(proxyFile, /cluster-dns|slice-controller/);
    assert.equal(state.server, "https://127.0.0.1:41234");
    assert.equal(state.stack?.proxyMode, "iptables");
    assert.equal(readLabRuntime(dir), "kind");
    assert.deepEqual(readKindState(dir)?.images, [
      "switchyard/kube-proxy:0.1.0",
      "switchyard/slice-controller:0.1.0",
      "switchyard/cluster-dns:0.1.0",
    ]);
  });

  test("what nothing orders runs at once, what needs another step's result waits for it, every step timed", async () => {
    const { dir, m, state } = await upOnFakeMachine();
    const overlap = (a: string, b: string) => {
      const [x, y] = [m.span(a), m.span(b)];
      return x.start < y.end && y.start < x.end;
    };
    const before = (a: string, b: string) => m.span(a).end < m.span(b).start;
    const build = "node <repo>/scripts/images.mjs";
    assert.ok(overlap(build, "provision lab"), "our images are built while the cluster is created");
    assert.ok(before(build, "docker tag switchyard/kube-proxy:dev"), "tagged once built");
    assert.ok(overlap("docker exec lab-worker sh -c <mounts>", "docker exec lab-worker2 sh -c <mounts>"));
    assert.ok(overlap("docker exec lab-worker sh -c <script>", "docker exec lab-worker3 sh -c <script>"));
    assert.ok(before("provision lab", "docker exec lab-worker sh -c <mounts>"), "mounts in nodes that exist");
    for (const first of [
      build,
      "docker tag switchyard/cluster-dns:dev",
      "docker exec lab-worker3 sh -c <script>",
    ])
      assert.ok(before(first, "load "), `${first} before the images are loaded`);
    assert.ok(overlap("load ", "kubectl wait --for=condition=Ready"), "loaded while the nodes become Ready");
    // The stack's pods start with their images there and on Ready nodes; its waits all at once.
    assert.ok(before("load ", "kubectl apply"));
    assert.ok(
      before("kubectl wait --for=condition=Ready", "kubectl -n kube-system delete deployment coredns"),
    );
    assert.ok(before("kubectl -n kube-system delete deployment coredns", "kubectl apply"));
    const waits = [
      "kubectl -n kube-system rollout status daemonset/kube-proxy",
      "kubectl -n kube-system rollout status deployment/coredns",
      "kubectl -n kube-system get endpointslices",
    ];
    const applyProxy = "kubectl apply --server-side --force-conflicts --field-manager=switchyard-lab -f";
    const applyProxyFile = `${applyProxy} ${kindPaths(dir).proxyManifests}`;
    const applyRest = `${applyProxy} ${kindPaths(dir).manifests}`;
    // kube-proxy applied first, and the rest only once every node's proxy has synced.
    assert.ok(before(applyProxyFile, waits[0] as string));
    for (const node of nodes.split(" ")) {
      const synced = `docker exec ${node} curl -s --max-time 2 http://127.0.0.1:10249/metrics`;
      assert.ok(
        before(applyProxyFile, synced) && before(synced, applyRest),
        `${node}'s proxy synced in between`,
      );
      assert.ok(overlap(synced, waits[0] as string), `${node}'s sync waited for with the rollout`);
    }
    assert.ok(before(waits[0] as string, applyRest));
    for (const w of waits.slice(1)) assert.ok(before(applyRest, w));
    assert.ok(overlap(waits[1] as string, waits[2] as string));
    // Each step in lab.json, in the order it started, and in the summary's table.
    const steps = readKindState(dir)?.steps ?? [];
    assert.deepEqual(steps, state.steps);
    const names = steps.map((t) => t.step);
    assert.equal(names[0], "node image");
    for (const want of [
      "cluster: creating cluster lab: 4 node containers",
      "images: building kube-proxy, slice-controller, cluster-dns,",
      "load: loading 5 images into the nodes",
      "nodes: nodes Ready",
      "nodes: pod network on lab-worker2",
      "stack: daemonset/kube-proxy rolled out",
      "stack: kube-dns endpoints in a slice our controller wrote",
    ])
      assert.ok(
        names.some((n) => n.startsWith(want)),
        want,
      );
    for (const t of steps) assert.ok(t.startMs <= t.endMs, t.step);
    const summary = kindUpSummary({ ...state, upSeconds: 1, nodesSeconds: 1 }, dir).split("\n");
    const table = summary.indexOf(stepTable(steps)[0] as string);
    assert.equal(table, 2, "the table right under the ready line");
    assert.deepEqual(summary.slice(table, table + steps.length + 1), stepTable(steps));
  });

  test("--stack upstream: kubeadm's kube-proxy, CoreDNS and slice controllers, ours loaded beside them", async () => {
    const dir = stateDir();
    const m = fakeMachine(undefined, [upstreamSlice]);
    const state = await kindLabUp({
      stateDir: dir,
      input: { name: "lab" },
      stack: "nftables",
      stackKind: "upstream",
      tools,
      deps: m.deps,
      out: sink,
    });
    const paths = kindPaths(dir);
    const brief = m.brief();
    assert.deepEqual(brief.slice(brief.indexOf("docker exec lab-worker3 sh -c <script>") + 1), [
      `load ${["kube-proxy", "slice-controller", "cluster-dns"].map((a) => `switchyard/${a}:0.1.0 switchyard/${a}:dev`).join(" ")} switchyard/echo:0.1.0 switchyard/loadgen:0.1.0 into ${nodes}`,
      "kubectl wait --for=condition=Ready nodes --all --timeout=300s",
      "kubectl -n kube-system rollout status daemonset/kube-proxy --timeout=300s",
      "kubectl -n kube-system rollout status deployment/coredns --timeout=300s",
      ...["lab-control-plane", "lab-worker", "lab-worker2", "lab-worker3"].map(
        (n) => `docker exec ${n} curl -s --max-time 2 http://127.0.0.1:10249/metrics`,
      ),
      "kubectl -n kube-system get endpointslices -l kubernetes.io/service-name=kube-dns -o json --show-managed-fields",
    ]);
    // Nothing of ours applied, kubeadm's CoreDNS kept; kubeadm runs kube-proxy in the mode asked for, and the
    // controller-manager keeps its EndpointSlice controllers.
    assert.ok(!brief.some((c) => c.includes("apply") || c.includes("delete")));
    assert.equal(m.specs[0]?.cluster.kubeProxyMode, "nftables");
    assert.equal(m.specs[0]?.cluster.controllers, undefined);
    assert.equal(m.specs[0]?.kubeconfig, paths.kubeconfig);
    assert.deepEqual(state.stack && { kind: state.stack.kind, mode: state.stack.proxyMode }, {
      kind: "upstream",
      mode: "nftables",
    });
  });

  test("--proxy-mode ebpf: the nodes' mounts before the stack, the proxy given them, the lab's state too", async () => {
    const dir = stateDir();
    const m = fakeMachine();
    const state = await kindLabUp({
      stateDir: dir,
      input: { name: "lab" },
      stack: "ebpf",
      tools,
      deps: m.deps,
      out: sink,
    });
    const brief = m.brief();
    const mounts = brief.filter((c) => c.endsWith("sh -c <mounts>"));
    assert.deepEqual(
      mounts,
      nodes.split(" ").map((n) => `docker exec ${n} sh -c <mounts>`),
    );
    const lastMount = brief.lastIndexOf(mounts.at(-1) ?? "");
    assert.ok(lastMount < brief.findIndex((c) => c.includes("apply")), "mounted before the stack is applied");
    const manifests = readFileSync(kindPaths(dir).manifests, "utf8");
    assert.match(manifests, /^ +mode: ebpf$/m);
    assert.match(manifests, /- '--cgroup-root=\/sys\/fs\/cgroup'$/m);
    assert.match(manifests, /^ +path: \/run\/switchyard\/cgroup2$/m);
    assert.match(manifests, /^ +hostPID: true$/m);
    assert.deepEqual(state.ebpf, kindEbpfPlaces);
    assert.deepEqual(readKindState(dir)?.ebpf, kindEbpfPlaces, "migrate and the scenarios read them back");
  });

  test("--stack upstream --proxy-mode ebpf is refused before anything runs: upstream has no ebpf mode", async () => {
    const m = fakeMachine();
    await assert.rejects(
      kindLabUp({
        stateDir: stateDir(),
        input: { name: "lab" },
        stack: "ebpf",
        stackKind: "upstream",
        tools,
        deps: m.deps,
        out: sink,
      }),
      /^Error: upstream's kube-proxy has no ebpf mode \(it is Switchyard's\); pick iptables or nftables$/,
    );
    assert.deepEqual(m.commands, []);
  });

  test("--no-stack: no images, no manifests; the cluster and its nodes only", async () => {
    const m = fakeMachine();
    await kindLabUp({
      stateDir: stateDir(),
      input: { name: "lab" },
      tools,
      deps: m.deps,
      out: sink,
      timeoutSeconds: 60,
    });
    assert.deepEqual(
      m.brief().map((c) => c.split(" ").slice(0, 3).join(" ")),
      [
        "docker image inspect",
        "provision lab kindest/node:v1.37.2",
        ...["lab-control-plane", "lab-worker", "lab-worker2", "lab-worker3"].map((n) => `docker exec ${n}`),
        "kubectl get nodes",
        ...["lab-control-plane", "lab-worker", "lab-worker2", "lab-worker3"].map((n) => `docker exec ${n}`),
        "kubectl wait --for=condition=Ready",
      ],
    );
  });

  test("a failing image build is one line, and nothing after it runs", async () => {
    const dir = stateDir();
    const m = fakeMachine((argv) =>
      argv.some((a) => a.endsWith("images.mjs"))
        ? '[images] slice-controller: ERROR: failed to solve: process "/bin/sh -c npm ci" did not complete successfully\nmore'
        : undefined,
    );
    await assert.rejects(
      kindLabUp({ stateDir: dir, input: { name: "lab" }, stack: "iptables", tools, deps: m.deps, out: sink }),
      (err: Error) => {
        assert.equal(
          err.message,
          'building kube-proxy, slice-controller, cluster-dns, echo, loadgen (scripts/images.mjs) failed: [images] slice-controller: ERROR: failed to solve: process "/bin/sh -c npm ci" did not complete successfully',
        );
        return true;
      },
    );
    // The cluster was being created meanwhile: it is removed, and nothing that needs the images ran.
    assert.deepEqual(m.brief().slice(-2), [listNodes, `docker rm -f -v ${nodes}`]);
    assert.ok(
      !m.brief().some((c) => c.startsWith("load ") || c.includes("apply") || c.includes("docker tag")),
    );
    assert.ok(
      readKindState(dir)?.steps?.some((t) => t.step.startsWith("images: building")),
      "timed, failed too",
    );
  });

  test("a failing wait among those run at once names the first of them in the plan, and removes the cluster", async () => {
    const dir = stateDir();
    const m = fakeMachine((argv) =>
      argv.includes("rollout") ? "error: timed out waiting for the condition" : undefined,
    );
    await assert.rejects(
      kindLabUp({ stateDir: dir, input: { name: "lab" }, stack: "iptables", tools, deps: m.deps, out: sink }),
      /^Error: daemonset\/kube-proxy rolled out failed: error: timed out waiting for the condition$/,
    );
    assert.deepEqual(m.brief().slice(-2), [listNodes, `docker rm -f -v ${nodes}`]);
    const ended = m.brief().indexOf(listNodes);
    for (const w of ["daemonset/kube-proxy", "deployment/coredns", "deployment/switchyard-slice-controller"])
      assert.ok(
        m.brief().findIndex((c) => c.includes(`rollout status ${w}`)) < ended,
        `${w} was waited for before the clean-up`,
      );
  });

  test("a failing step made from the cluster's answers (a node's pod network) also removes the cluster", async () => {
    const dir = stateDir();
    const m = fakeMachine((argv) =>
      argv[1] === "exec" && argv[2] === "lab-worker2" && !argv.at(-1)?.includes("systemctl")
        ? "Error: ip: RTNETLINK answers: Invalid argument"
        : undefined,
    );
    await assert.rejects(
      kindLabUp({ stateDir: dir, input: { name: "lab" }, tools, deps: m.deps, out: sink }),
      /^Error: pod network on lab-worker2 failed: Error: ip: RTNETLINK answers: Invalid argument$/,
    );
    assert.deepEqual(m.brief().slice(-2), [listNodes, `docker rm -f -v ${nodes}`]);
  });

  test("a failure after the cluster exists saves the nodes' logs and removes the cluster", async () => {
    const dir = stateDir();
    const m = fakeMachine((argv) =>
      argv.includes("rollout") ? "error: timed out waiting for the condition" : undefined,
    );
    await assert.rejects(
      kindLabUp({ stateDir: dir, input: { name: "lab" }, stack: "nftables", tools, deps: m.deps, out: sink }),
      /^Error: daemonset\/kube-proxy rolled out failed: error: timed out waiting for the condition$/,
    );
    assert.deepEqual(m.brief().slice(-2), [listNodes, `docker rm -f -v ${nodes}`]);
    // Each node's journal, kubelet log and inspect output, as `kind export logs` keeps them.
    const logs = join(kindPaths(dir).logs, "kind");
    for (const n of nodes.split(" "))
      for (const f of ["journal.log", "kubelet.log", "inspect.json"])
        assert.ok(existsSync(join(logs, n, f)), `${n}/${f}`);
    assert.ok(m.brief().includes("docker exec lab-worker journalctl --no-pager -u kubelet"));
  });

  test("down deletes the recorded cluster and the state folder; a second down finds nothing", async () => {
    const dir = stateDir();
    const up = fakeMachine();
    await kindLabUp({ stateDir: dir, input: { name: "lab" }, tools, deps: up.deps, out: sink });
    const down = fakeMachine();
    const removed = await kindDown(dir, { tools, deps: down.deps });
    assert.deepEqual(down.brief(), [
      listNodes,
      `docker rm -f -v ${nodes}`,
      "docker network inspect --format {{.Name}} kind",
      "docker ps -a -q --filter network=kind",
      "docker network rm kind",
    ]);
    assert.deepEqual(removed, [
      "kind cluster lab (lab-control-plane, lab-worker, lab-worker2, lab-worker3)",
      "Docker network kind (no container left on it)",
    ]);
    assert.equal(existsSync(dir), false);
    assert.deepEqual(await kindDown(dir, { tools, deps: down.deps }), []);
  });

  test("down keeps kind's network while a container (another cluster's node, stopped or not) is on it", async () => {
    const dir = stateDir();
    await kindLabUp({ stateDir: dir, input: { name: "lab" }, tools, deps: fakeMachine().deps, out: sink });
    const commands: string[][] = [];
    const exec = async (argv: readonly string[]) => {
      commands.push([...argv]);
      return argv[1] === "ps" && argv.includes("network=kind") ? "3f2a9c1d0e4b\n" : "";
    };
    const removed = await kindDown(dir, { tools, deps: { exec } });
    assert.deepEqual(removed, ["kind cluster lab (no node container was left)"]);
    assert.ok(!commands.some((c) => c.includes("network") && c.includes("rm")), "no docker network rm");
  });

  test("up on a folder with a kind lab removes that cluster first (a crash)", async () => {
    const dir = stateDir();
    await kindLabUp({ stateDir: dir, input: { name: "old" }, tools, deps: fakeMachine().deps, out: sink });
    const m = fakeMachine();
    await kindLabUp({ stateDir: dir, input: { name: "new" }, tools, deps: m.deps, out: sink });
    assert.deepEqual(m.brief().slice(0, 2), [
      "docker ps -a --filter label=io.x-k8s.kind.cluster=old --format {{.Names}}",
      `docker rm -f -v ${nodes}`,
    ]);
    assert.equal(readKindState(dir)?.input.name, "new");
  });
});

describe("kind: kube-dns readiness", () => {
  test("only a ready endpoint in a slice our controller wrote counts", () => {
    assert.equal(kubeDnsSliced(JSON.stringify({ items: [ourSlice] })), true);
    const upstream = {
      ...ourSlice,
      metadata: { ...ourSlice.metadata, managedFields: [{ manager: "kube-controller-manager" }] },
    };
    assert.equal(kubeDnsSliced(JSON.stringify({ items: [upstream] })), "0 slices of ours, no ready endpoint");
    const notReady = {
      ...ourSlice,
      endpoints: [{ addresses: ["10.244.1.2"], conditions: { ready: false } }],
    };
    assert.equal(kubeDnsSliced(JSON.stringify({ items: [notReady] })), "1 slices of ours, no ready endpoint");
    // Upstream's stack waits for kube-controller-manager's slice, and ours does not count there.
    assert.equal(kubeDnsSliced(JSON.stringify({ items: [upstreamSlice] }), "upstream"), true);
    assert.equal(
      kubeDnsSliced(JSON.stringify({ items: [ourSlice] }), "upstream"),
      "0 slices of kube-controller-manager's, no ready endpoint",
    );
  });
});
