// The switchyard/kube-proxy image on a real Docker engine as kubeadm v1.37.2's kube-proxy DaemonSet runs it
// (cmd/kubeadm/app/phases/addons/proxy/manifests.go): privileged, on the node's network (hostNetwork), command
// `/usr/local/bin/kube-proxy --config=/var/lib/kube-proxy/config.conf --hostname-override=<node>`, the ConfigMap
// (config.conf and kubeconfig.conf) mounted at /var/lib/kube-proxy, /run/xtables.lock and /lib/modules (read-only)
// from the host. The node is the one-node topology of netns.ts, built inside a `--network none` holder
// container's network namespace; kube-proxy joins it with `--network container:<holder>`, as a hostNetwork
// pod shares the node's. Against the real control plane, in iptables mode on each backend (picked from
// kubelet's hint chain, as upstream's iptables-wrapper does) and in nftables mode: a ClusterIP reaches a pod,
// /healthz and /livez answer on 10256, and `--cleanup` from the image leaves no rules.
// Skips only when no engine, no root or no upstream binaries can be had, with that reason.
import assert from "node:assert/strict";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { eventually } from "@switchyard/kube/testing";
import {
  buildImage,
  containerLog,
  docker,
  dockerEngine,
  missingControlPlane,
  removeContainers,
  startControlPlane,
  type TestControlPlane,
} from "@switchyard/testbed";
import yaml from "js-yaml";
import { CLUSTER_CIDR, missingKernelTools, Net, NODE_IP, names } from "../src/testing/netns.js";
import { type Api, apiClient, createNode, createService, createSlice } from "./api.js";

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const engine = dockerEngine();
const skip =
  engine.skip ??
  missingKernelTools(["iptables-legacy-save", "iptables-nft-save", "nft"]) ??
  missingControlPlane();
const image = "switchyard/kube-proxy:dev";
const NODE = "node1";
const NS = "shop";
// What any mode runs (packages/proxier, apps/kube-proxy/src): node set-up, the three data planes, conntrack,
// iptables mode's nfacct counters.
const TOOLS = [
  "ip",
  "sysctl",
  "modprobe",
  "ipset",
  "ipvsadm",
  "conntrack",
  "nfacct",
  "nft",
  ...["iptables", "ip6tables"].flatMap((base) =>
    ["", "-legacy", "-nft"].flatMap((backend) =>
      ["", "-save", "-restore"].map((t) => `${base}${backend}${t}`),
    ),
  ),
];

// The shipped ConfigMap's config.conf (deploy/daemonset.yaml, laid out as kubeadm writes it) for this node.
function configFor(mode: "iptables" | "nftables"): string {
  const docs = yaml.loadAll(readFileSync(join(appDir, "deploy", "daemonset.yaml"), "utf8")) as {
    kind?: string;
    data?: Record<string, string>;
  }[];
  const text = docs.find((d) => d.kind === "ConfigMap")?.data?.["config.conf"];
  if (!text) throw new Error("deploy/daemonset.yaml has no ConfigMap with config.conf");
  const config = yaml.load(text) as Record<string, unknown>;
  return yaml.dump({ ...config, mode, clusterCIDR: CLUSTER_CIDR });
}

// The lock every iptables user on the host takes, shared with the container as kubeadm's hostPath.
const XTABLES_LOCK = "/run/xtables.lock";
const PREFIX = `syi${process.pid % 10000}`;
// The container whose network namespace is the node.
const HOLDER = `${PREFIX}-node`;
// Every container started, for after() to remove whatever a failure left running.
const started: string[] = [];

// A one-off privileged container on the node's network.
function runOnNode(args: string[]): string {
  return docker(engine, ["run", "--rm", "--privileged", "--network", `container:${HOLDER}`, ...args]);
}

// The DaemonSet's container: privileged, the node's network, kubeadm's command line and volumes.
function runKubeProxy(name: string, dir: string, args: string[], detach: boolean): string {
  removeContainers(engine, [name]);
  if (detach) started.push(name);
  return docker(engine, [
    "run",
    ...(detach ? ["-d"] : ["--rm"]),
    "--name",
    name,
    "--privileged",
    "--network",
    `container:${HOLDER}`,
    "-e",
    `NODE_NAME=${NODE}`,
    "-v",
    `${dir}:/var/lib/kube-proxy:ro`,
    "-v",
    `${XTABLES_LOCK}:${XTABLES_LOCK}`,
    "-v",
    "/lib/modules:/lib/modules:ro",
    "--entrypoint",
    "/usr/local/bin/kube-proxy",
    image,
    ...args,
  ]);
}

// What a running kube-proxy container `name` must have done on the node, on `backend` in iptables mode.
async function programs(node: Net, name: string, web: string, backend?: "legacy" | "nft"): Promise<void> {
  const log = () => containerLog(engine, name);
  await eventually("the ClusterIP to reach a pod", async () => {
    const running = docker(engine, ["inspect", "--format", "{{.State.Running}}", name]);
    if (running !== "true") throw new Error("kube-proxy exited");
    return names(await node.probe(web, 80, 1)).has("pod-0") || undefined;
  }).catch((err: Error) => {
    throw new Error(`${err.message}\n${log()}`);
  });
  const answers = await node.probe(web, 80, 20);
  // Anything but the two pods is a failure; the kernel's state at that moment says why.
  if (!answers.every((a) => /^pod-[01]\b/.test(a)))
    assert.fail(`answers ${answers.join(", ")}\n${log()}\n${node.kernelState()}`);
  assert.deepEqual(names(answers), new Set(["pod-0", "pod-1"]), log());
  // The node's end of the host veth: answering there proves the binds are on the node's network.
  for (const path of ["/healthz", "/livez"]) {
    const res = await fetch(`http://${node.apiIP}:10256${path}`);
    assert.equal(res.status, 200, `${path}: ${await res.text()}\n${log()}`);
  }
  if (!backend) {
    assert.match(node.in(node.node, ["nft", "list", "table", "ip", "kube-proxy"]), /services/, log());
    return;
  }
  const [used, other] = backend === "legacy" ? ["legacy", "nft"] : ["nft", "legacy"];
  assert.match(node.in(node.node, [`iptables-${used}-save`, "-t", "nat"]), /KUBE-SERVICES/, log());
  assert.doesNotMatch(node.in(node.node, [`iptables-${other}-save`, "-t", "nat"]), /KUBE-SERVICES/, log());
  // The image's plain `iptables` goes to the backend the hint names, as upstream's wrapper decides. A new
  // container, not `docker exec`: exec into a privileged container fails where the engine drops capabilities
  // (scripts/runc-drop-caps.mjs rewrites only create and run).
  const plain = runOnNode(["--entrypoint", "iptables", image, "--version"]);
  assert.ok(plain.includes(backend === "legacy" ? "(legacy)" : "(nf_tables)"), `iptables is ${plain}`);
}

describe("switchyard/kube-proxy image as kubeadm's DaemonSet runs it", { skip, timeout: 900_000 }, () => {
  let cp: TestControlPlane | undefined;
  let api: Api;
  let net: Net | undefined;
  let dir = "";
  let web = "";

  before(async () => {
    buildImage(engine, "kube-proxy");
    // The node: a container that only holds a network namespace; Net names it and builds the node in it.
    removeContainers(engine, [HOLDER]);
    started.push(HOLDER);
    docker(engine, [
      "run",
      "-d",
      "--name",
      HOLDER,
      "--network",
      "none",
      "--entrypoint",
      "sleep",
      image,
      "infinity",
    ]);
    const pid = Number(docker(engine, ["inspect", "--format", "{{.State.Pid}}", HOLDER]));
    net = new Net(PREFIX, 219, pid);
    await net.build(["10.180.0.1", "10.180.0.2"]);
    cp = await startControlPlane();
    api = apiClient(cp.server, cp.stateDir);
    dir = mkdtempSync(join(tmpdir(), "sy-proxy-image-"));
    // kubeadm's kubeconfig.conf uses the ServiceAccount token; the admin one, pointed at the forwarder the
    // node reaches, stands in for it (RBAC is not what this test is about).
    const kubeconfig = await net.kubeconfigFor(cp.kubeconfigPath, cp.server);
    writeFileSync(join(dir, "kubeconfig.conf"), readFileSync(kubeconfig));
    rmSync(dirname(kubeconfig), { recursive: true, force: true });
    // kubeadm's hostPath type FileOrCreate; without the file, `docker run -v` would make a folder there.
    closeSync(openSync(XTABLES_LOCK, "a"));
    await createNode(api, NODE, NODE_IP);
    await api.call("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    const svc = await createService(api, NS, "web", { ports: [{ name: "http", port: 80, protocol: "TCP" }] });
    web = svc.spec?.clusterIP ?? "";
    await createSlice(api, NS, "web", { "10.180.0.1": NODE, "10.180.0.2": NODE });
  });

  after(async () => {
    removeContainers(engine, started);
    await net?.destroy();
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("every tool a mode runs is in the image", () => {
    const script = `for t in ${TOOLS.join(" ")}; do command -v "$t" >/dev/null || echo "missing: $t"; done`;
    assert.equal(docker(engine, ["run", "--rm", "--entrypoint", "sh", image, "-c", script]), "");
    // The kernel-independent ones run; ipset and ipvsadm need the kernel's modules even to print a version.
    const versions = docker(engine, [
      "run",
      "--rm",
      "--entrypoint",
      "sh",
      image,
      "-c",
      "ip -V && sysctl --version && conntrack --version && nft --version && iptables-legacy --version && iptables-nft --version",
    ]);
    for (const want of [/iproute2/, /procps/, /conntrack-tools/, /nftables v/, /\(legacy\)/, /\(nf_tables\)/])
      assert.match(versions, want);
  });

  const modes = [
    { name: "iptables mode, legacy backend", mode: "iptables", backend: "legacy" },
    { name: "iptables mode, nft backend", mode: "iptables", backend: "nft" },
    { name: "nftables mode", mode: "nftables", backend: undefined },
  ] as const;

  for (const m of modes) {
    test(m.name, async () => {
      const node = net as Net;
      const name = `${PREFIX}-kp-${m.mode}${m.backend ? `-${m.backend}` : ""}`;
      // kubelet leaves this chain in the backend it uses; the image's iptables-wrapper (and the proxy) read it.
      const hint = m.backend ? `iptables-${m.backend}` : undefined;
      if (hint) node.in(node.node, [hint, "-t", "mangle", "-N", "KUBE-IPTABLES-HINT"]);
      let cleanup: unknown;
      try {
        writeFileSync(join(dir, "config.conf"), configFor(m.mode));
        runKubeProxy(
          name,
          dir,
          ["--config=/var/lib/kube-proxy/config.conf", `--hostname-override=${NODE}`],
          true,
        );
        await programs(node, name, web, m.backend);
      } finally {
        removeContainers(engine, [name]);
        // The image's --cleanup, on the same network and volumes, removes every mode's rules.
        try {
          runKubeProxy(`${name}-cleanup`, dir, ["--cleanup"], false);
        } catch (err) {
          cleanup = err;
        }
        if (hint) node.in(node.node, [hint, "-t", "mangle", "-X", "KUBE-IPTABLES-HINT"]);
      }
      assert.equal(cleanup, undefined, "kube-proxy --cleanup failed");
      assert.doesNotMatch(node.in(node.node, ["nft", "list", "tables"]), /kube-proxy/);
      for (const save of ["iptables-legacy-save", "iptables-nft-save"]) {
        const left = node
          .in(node.node, [save])
          .split("\n")
          .filter((l) => /KUBE-/.test(l) && !/KUBE-FIREWALL/.test(l));
        assert.deepEqual(left, [], `${save} still has kube-proxy's rules`);
      }
    });
  }
});
