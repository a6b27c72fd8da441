import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writePrivateFile } from "@switchyard/testbed/private-files";
import {
  type ContainerRuntimeClient,
  getContainerRuntimeClient,
  type StartedTestContainer,
} from "testcontainers";
import type { IpFamily } from "../netns/plan.js";
import { apiServerPort, type KubeadmCluster, renderKubeadmConfig } from "./kubeadm-config.js";
import { hostKubeconfig } from "./kubeconfig.js";
import { KindNodeContainer, kindNetwork } from "./node-container.js";
import type { KindNodePlan } from "./options.js";

/** What `kind create cluster` does for a lab, as data: the cluster, its nodes, where the results go. */
export interface KindClusterSpec {
  cluster: Omit<KubeadmCluster, "kubernetesVersion">;
  nodes: readonly KindNodePlan[];
  image: string;
  /** Leave the nodes to Ryuk (testcontainers' reaper) when this process ends: for tests, never for `up`. */
  reap: boolean;
  /** The host's kubeconfig, written here (never into ~/.kube/config). */
  kubeconfig: string;
  /** kubeadm's output and each node's config are kept here. */
  logDir: string;
}

/**
 * Creates the cluster the way kind does (pkg/cluster/internal/create): kind's network, the node containers in
 * parallel (testcontainers), each node's kubeadm config, `kubeadm init` on the control plane, kind's default
 * StorageClass, `kubeadm join` on the workers in parallel, and a kubeconfig for the host that points at the
 * apiserver's published loopback port. No CNI: the lab writes the pod network itself (pod-network.ts).
 */
export async function provisionKindCluster(p: KindClusterSpec, say: (line: string) => void): Promise<void> {
  const client = await getContainerRuntimeClient();
  const family = p.cluster.ipFamily ?? "ipv4";
  const ipv6 = family !== "ipv4";
  await ensureKindNetwork(client, ipv6);
  say(`starting ${p.nodes.length} node containers from ${p.image}`);
  const started = await Promise.all(
    p.nodes.map((n) => new KindNodeContainer(p.image, p.cluster.name, n, kindNetwork, p.reap, ipv6).start()),
  );
  const byName = new Map(p.nodes.map((n, i) => [n.name, started[i] as StartedTestContainer]));
  const controlPlane = p.nodes.find((n) => n.role === "control-plane");
  if (!controlPlane) throw new Error("a kind cluster needs a control-plane node");
  const cp = byName.get(controlPlane.name) as StartedTestContainer;
  const version = (await run(cp, ["cat", "/kind/version"], p.logDir)).trim();
  mkdirSync(p.logDir, { recursive: true });
  for (const n of p.nodes) {
    const node = byName.get(n.name) as StartedTestContainer;
    const ips = await nodeAddresses(client, node.getId(), family);
    const content = renderKubeadmConfig(
      { ...p.cluster, kubernetesVersion: version },
      { name: n.name, role: n.role, ips, labels: { "topology.kubernetes.io/zone": n.zone } },
    );
    writeFileSync(join(p.logDir, `${n.name}.kubeadm.conf`), content);
    await node.copyContentToContainer([{ content, target: "/kind/kubeadm.conf" }]);
  }
  say(`kubeadm init on ${controlPlane.name} (Kubernetes ${version})`);
  await run(cp, ["kubeadm", "init", "--config=/kind/kubeadm.conf", "--skip-token-print", "--v=6"], p.logDir);
  await run(cp, ["kubectl", "apply", "-f", "/kind/manifests/default-storage.yaml"], p.logDir);
  const workers = p.nodes.filter((n) => n.role === "worker");
  say(`kubeadm join on ${workers.map((w) => w.name).join(", ")}`);
  await Promise.all(
    workers.map((w) =>
      run(
        byName.get(w.name) as StartedTestContainer,
        ["kubeadm", "join", "--config", "/kind/kubeadm.conf", "--v=6"],
        p.logDir,
      ),
    ),
  );
  const port = await publishedApiPort(client, cp.getId());
  const admin = await run(cp, ["cat", "/etc/kubernetes/admin.conf"], p.logDir);
  writePrivateFile(p.kubeconfig, hostKubeconfig(admin, p.cluster.name, `https://127.0.0.1:${port}`));
}

/** The IPv6 range of kind's network as kind itself makes it (a ULA /64 kind derives from the name "kind"). */
export const kindNetworkIpv6Subnet = "fc00:f853:ccd:e793::/64";

/**
 * kind's network, made as kind makes it when it is missing (a bridge with masquerading; with `ipv6`, an IPv6
 * range too, the engine adding an IPv4 one) and reused as it is otherwise: every kind cluster on an engine shares
 * it, and kind's own CLI finds it by name. One without IPv6 that a cluster with IPv6 needs is made anew when no
 * container is on it, and refused in one line otherwise.
 */
async function ensureKindNetwork(client: ContainerRuntimeClient, ipv6: boolean): Promise<void> {
  const found = await client.network
    .getById(kindNetwork)
    .inspect()
    .catch(() => undefined);
  if (found && (found.EnableIPv6 || !ipv6)) return;
  if (found) {
    const attached = Object.keys(found.Containers ?? {}).length;
    if (attached > 0)
      throw new Error(
        `Docker network ${kindNetwork} has no IPv6 and ${attached} containers on it (another kind cluster's?): take them down, or use --ip-family ipv4`,
      );
    await client.network.remove(client.network.getById(kindNetwork));
  }
  await client.network.create({
    Name: kindNetwork,
    Driver: "bridge",
    Options: {
      "com.docker.network.bridge.enable_ip_masquerade": "true",
      "com.docker.network.driver.mtu": "1500",
    },
    ...(ipv6
      ? { EnableIPv6: true, IPAM: { Driver: "default", Config: [{ Subnet: kindNetworkIpv6Subnet }] } }
      : {}),
  });
}

/** A node container's addresses on kind's network, one per family of the cluster, the primary first. */
async function nodeAddresses(
  client: ContainerRuntimeClient,
  id: string,
  family: IpFamily,
): Promise<string[]> {
  const info = await client.container.inspect(client.container.getById(id));
  const net = info.NetworkSettings.Networks[kindNetwork];
  const byFamily = {
    ipv4: [net?.IPAddress],
    ipv6: [net?.GlobalIPv6Address],
    dual: [net?.IPAddress, net?.GlobalIPv6Address],
  };
  const ips = byFamily[family];
  if (ips.some((ip) => !ip))
    throw new Error(
      `node container ${id.slice(0, 12)} has no ${family} address on Docker network ${kindNetwork}`,
    );
  return ips as string[];
}

/** Runs a command in a node; its output goes to the node's log file; a failure is one line with its last words. */
async function run(node: StartedTestContainer, argv: string[], logDir: string): Promise<string> {
  const r = await node.exec(argv);
  mkdirSync(logDir, { recursive: true });
  writeFileSync(
    join(logDir, `${node.getName().replace(/^\//, "")}.log`),
    `$ ${argv.join(" ")}\n${r.output}\n`,
    {
      flag: "a",
    },
  );
  if (r.exitCode !== 0) {
    const last = r.output.trim().split("\n").filter(Boolean).pop() ?? "";
    throw new Error(
      `${argv.slice(0, 2).join(" ")} on ${node.getName().replace(/^\//, "")} exited ${r.exitCode}: ${last}`,
    );
  }
  return r.stdout;
}

/** The host port the engine bound the control plane's apiserver port to (loopback only). */
async function publishedApiPort(client: ContainerRuntimeClient, id: string): Promise<string> {
  const info = await client.container.inspect(client.container.getById(id));
  const port = info.NetworkSettings.Ports?.[`${apiServerPort}/tcp`]?.[0]?.HostPort;
  if (!port) throw new Error(`the control-plane node publishes no port for ${apiServerPort}/tcp`);
  return port;
}
