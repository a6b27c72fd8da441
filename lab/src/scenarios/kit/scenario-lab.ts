import { readFileSync } from "node:fs";
import { type HttpRestClient, isNotFound } from "@switchyard/kube";
import { adminCredentials, labClient } from "@switchyard/testbed/controlplane";
import { Progress } from "@switchyard/testbed/progress";
import type { Container, Namespace, Node, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { echoImage, loadgenImage } from "../../agent/images.js";
import type { Exec } from "../../exec.js";
import { kindCredentials } from "../../kind/kubeconfig.js";
import { type KindLabState, readKindState } from "../../kind/state.js";
import { labPaths, readLabState } from "../../netns/state.js";
import { inCgroup, type LabEbpfPlaces } from "../../stack/ebpf-places.js";
import { needOurStack } from "../../stack/manifests.js";
import { waitUntil } from "../../stack/wait.js";
import { kindContainerRun, kindPodRun, kindSandboxImage, netnsPodRun } from "./pod-run.js";
import type { ScenarioContext } from "./scenario.js";
import { type StatsReader, statsFromPodIp, statsThroughApiserver } from "./workloads.js";

/** A node that runs pods and a proxy, as a scenario sees it on either runtime. */
export interface LabNode {
  /** The Node object's name. */
  name: string;
  zone: string;
  /** The address other nodes reach it on. */
  ip: string;
  /** The argv prefix that runs a command in the node's network namespace (its rules, its loopback). */
  run: readonly string[];
}

/** What every scenario needs of the running lab: its nodes, an API client, progress, and a deadline to bound hangs. */
export interface ScenarioLab {
  runtime: "netns" | "kind";
  /** Starts the names of what a scenario makes outside its namespace (hollow nodes). */
  prefix: string;
  /** The lab's kubeconfig, for the kubectl lines a report quotes. */
  kubeconfig: string;
  /** The kube-dns Service's ClusterIP. */
  dnsIp: string;
  /** The nodes that run pods, in name order (kind's control-plane node is left out, as the netns lab's is). */
  nodes: LabNode[];
  /** The images scenario pods run; on kind they are loaded into the nodes, never pulled. */
  images: { echo: string; loadgen: string; pause: string };
  client: HttpRestClient;
  exec: Exec;
  progress: Progress;
  /** Reads a traffic generator's counters (loadgen): from its pod IP on netns, through the apiserver on kind. */
  loadStats: StatsReader;
  /** The argv prefix that runs a command in a running pod's network namespace. */
  podRun(pod: Pod): Promise<readonly string[]>;
  /**
   * A pod that runs Node programs in its network (scale's timed connects): the container to give it, and the argv
   * prefix that runs `node` there. netns: a pause pod entered with this machine's Node; kind: the loadgen image's
   * Node, idle until asked, entered with crictl (the node container has no Node of its own).
   */
  nodeClient: { container: Container; node(pod: Pod): Promise<readonly string[]> };
  /** The nodes' cgroups and pin folders, which kube-proxy is given in every mode (ebpf-places.ts). */
  ebpf?: LabEbpfPlaces;
  /** A deadline for one wait; it only bounds a hang, nothing is measured with it. */
  deadline(ms?: number): number;
  /** Polls until `check` answers true (its strings say what is missing), within `ms`. */
  until(what: string, check: () => Promise<true | string>, ms?: number): Promise<void>;
  close(): void;
}

/** Node in the lab's images (lab/Dockerfile's entrypoints), and a program that waits until it is stopped. */
const imageNode = "/nodejs/bin/node";
const idleScript = "process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 3600000);";

/** The lab in ctx.stateDir on either runtime, as every scenario sees it. */
export async function openLab(ctx: ScenarioContext, label: string): Promise<ScenarioLab> {
  const kind = readKindState(ctx.stateDir) !== undefined;
  const base = kind ? await kindLab(ctx) : netnsLab(ctx);
  const progress = new Progress(label, ctx.out);
  const deadline = (ms = 180_000) => Date.now() + ms;
  return {
    ...base,
    exec: ctx.exec,
    progress,
    deadline,
    until: (what, check, ms) => waitUntil(what, check, deadline(ms), progress),
    close: () => base.client.close(),
  };
}

type RuntimeLab = Omit<ScenarioLab, "exec" | "progress" | "deadline" | "until" | "close">;

function netnsLab(ctx: ScenarioContext): RuntimeLab {
  const state = readLabState(ctx.stateDir);
  if (!state?.server) throw new Error(`no lab in ${ctx.stateDir}; run switchyard-lab up`);
  needOurStack("scenario", state.stack);
  const plan = state.plan;
  // A probe into a pod or node runs as one of the node's processes, which ebpf mode balances (ebpf-places.ts).
  const cgroupOf = (node: string | undefined) => plan.nodeList.find((n) => n.name === node)?.cgroup;
  const asNode = (node: string | undefined) => {
    const cgroup = cgroupOf(node);
    return cgroup ? inCgroup(cgroup) : [];
  };
  const podRun = async (pod: Pod) => [
    ...asNode(pod.spec?.nodeName),
    ...(await netnsPodRun(ctx.exec, plan.prefix, pod)),
  ];
  return {
    runtime: "netns",
    prefix: plan.prefix,
    kubeconfig: state.kubeconfig,
    dnsIp: plan.dnsIp,
    nodes: plan.nodeList.map((n) => ({
      name: n.name,
      zone: n.zone,
      ip: n.ip,
      run: [...asNode(n.name), "ip", "netns", "exec", n.netns],
    })),
    // The node agent runs the lab's own programs for these names and a sleeping pod for any other image.
    images: { echo: echoImage, loadgen: loadgenImage, pause: "registry.k8s.io/pause:3.10" },
    client: labClient(adminCredentials(state.server, labPaths(ctx.stateDir).controlPlane)),
    loadStats: statsFromPodIp,
    podRun,
    nodeClient: {
      container: { name: "c", image: "registry.k8s.io/pause:3.10" },
      node: async (pod) => [...(await podRun(pod)), process.execPath],
    },
    ...(plan.ebpf ? { ebpf: plan.ebpf } : {}),
  };
}

/** The kind lab in stateDir when scenarios can run on it; otherwise one line saying why not. */
export function scenarioKindState(stateDir: string): KindLabState {
  const state = readKindState(stateDir);
  if (!state?.server)
    throw new Error(
      `no kind lab is up in ${stateDir} (its up did not finish); run switchyard-lab up --runtime kind`,
    );
  needOurStack("scenario", state.stack);
  return state;
}

/** A kind lab: nodes are containers (`docker exec`), read from the Node objects; pods are entered with nsenter. */
async function kindLab(ctx: ScenarioContext): Promise<RuntimeLab> {
  const state = scenarioKindState(ctx.stateDir);
  if (!ctx.kind) throw new Error("scenario: a kind lab needs the docker CLI (the command line passes it)");
  const { docker, loadImages } = ctx.kind;
  const client = labClient(kindCredentials(readFileSync(state.kubeconfig, "utf8"), state.server));
  try {
    const nodes = (await client.call<{ items: Node[] }>("GET", "/api/v1/nodes")).items
      .filter((n) => !(n.spec?.taints ?? []).some((t) => t.effect === "NoSchedule"))
      .map((n) => ({
        name: n.metadata?.name ?? "",
        zone: n.metadata?.labels?.["topology.kubernetes.io/zone"] ?? "",
        ip: n.status?.addresses?.find((a) => a.type === "InternalIP")?.address ?? "",
        run: [docker, "exec", n.metadata?.name ?? ""],
      }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    const dns = await client.call<Service>("GET", "/api/v1/namespaces/kube-system/services/kube-dns");
    const first = nodes[0];
    if (!first) throw new Error("this kind lab has no node that takes pods");
    await loadImages();
    return {
      runtime: "kind",
      prefix: state.input.name,
      kubeconfig: state.kubeconfig,
      dnsIp: dns.spec?.clusterIP ?? "",
      nodes,
      images: { echo: echoImage, loadgen: loadgenImage, pause: await kindSandboxImage(ctx.exec, first.run) },
      client,
      loadStats: statsThroughApiserver(client),
      podRun: (pod) => kindPodRun(ctx.exec, docker, pod),
      nodeClient: {
        container: { name: "c", image: loadgenImage, command: [imageNode, "-e", idleScript] },
        node: async (pod) => [...(await kindContainerRun(ctx.exec, docker, pod, "c")), imageNode],
      },
      // `docker exec` into a node runs in the node container's cgroup, which ebpf mode serves: no inCgroup here.
      ...(state.ebpf ? { ebpf: state.ebpf } : {}),
    };
  } catch (err) {
    client.close();
    throw err;
  }
}

/**
 * Creates the scenario's namespace, runs `body`, and deletes the namespace afterwards whatever happened, waiting
 * until it is gone so that the next scenario starts on a clean lab. A namespace left by a crashed run is removed
 * first. `cleanup` runs before the namespace goes (things outside it, or pods no kubelet will finalize).
 */
export async function inNamespace<T>(
  lab: ScenarioLab,
  name: string,
  body: () => Promise<T>,
  cleanup: () => Promise<void> = async () => {},
): Promise<T> {
  await deleteNamespace(lab, name);
  await lab.client.call("POST", "/api/v1/namespaces", { metadata: { name } });
  try {
    await lab.until(`the default ServiceAccount of ${name}`, async () =>
      lab.client.call("GET", `/api/v1/namespaces/${name}/serviceaccounts/default`).then(() => true as const),
    );
    return await body();
  } finally {
    lab.progress.update(`cleaning up namespace ${name}`, true);
    await cleanup().catch((err: Error) => lab.progress.update(`cleanup: ${err.message}`, true));
    await deleteNamespace(lab, name);
  }
}

async function deleteNamespace(lab: ScenarioLab, name: string): Promise<void> {
  const path = `/api/v1/namespaces/${name}`;
  try {
    await lab.client.call("DELETE", path);
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  await lab.until(
    `namespace ${name} to be deleted`,
    async () => {
      try {
        const ns = await lab.client.call<Namespace>("GET", path);
        return `phase ${ns.status?.phase ?? "?"}`;
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    },
    300_000,
  );
}

/** The EndpointSlices of one Service, as the proxies see them. */
export async function serviceSlices(lab: ScenarioLab, ns: string, service: string): Promise<EndpointSlice[]> {
  const selector = encodeURIComponent(`kubernetes.io/service-name=${service}`);
  const list = await lab.client.call<{ items: EndpointSlice[] }>(
    "GET",
    `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${selector}`,
  );
  return list.items;
}

export const readyEndpoints = (slices: readonly EndpointSlice[]) =>
  slices.reduce((n, s) => n + (s.endpoints ?? []).filter((e) => e.conditions?.ready === true).length, 0);

export const allEndpoints = (slices: readonly EndpointSlice[]) =>
  slices.reduce((n, s) => n + (s.endpoints ?? []).length, 0);

/** A node of the lab by name; a one-line error listing them when there is none. */
export function labNode(lab: ScenarioLab, name: string): LabNode {
  const node = lab.nodes.find((n) => n.name === name);
  if (!node)
    throw new Error(`no node ${name} in this lab (nodes: ${lab.nodes.map((n) => n.name).join(", ")})`);
  return node;
}
