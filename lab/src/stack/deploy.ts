import { hostPort } from "@switchyard/basics";
import type { HttpRestClient } from "@switchyard/kube";
import { firstServiceIp } from "@switchyard/testbed/controlplane";
import type { Progress } from "@switchyard/testbed/progress";
import type { DaemonSet, Deployment } from "kubernetes-types/apps/v1.js";
import type { Pod } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { Exec } from "../exec.js";
import { repoRoot } from "../self.js";
import { applyObjects } from "./apply.js";
import { type EbpfPlaces, inCgroup } from "./ebpf-places.js";
import { type KubeObject, labStack, type ProxyMode, readStackParts, type StackKind } from "./manifests.js";
import { httpGet, waitUntil } from "./wait.js";

/**
 * The lab a stack is deployed into, as the stack sees it: its CIDRs, the DNS Service's address, and its nodes, each
 * a network namespace where the node's proxy is checked (the netns runtime's LabPlan is one).
 */
export interface StackLab {
  clusterCidr: string;
  serviceCidr: string;
  dnsIp: string;
  /** How many nodes run a proxy. */
  nodes: number;
  /** `cgroup`: the node's, whose processes ebpf mode balances (ebpf-places.ts); a check from the node runs in it. */
  nodeList: readonly { name: string; ip: string; netns: string; cgroup?: string }[];
  /** The nodes' cgroups and pin folders, which kube-proxy is given in every mode. */
  ebpf?: EbpfPlaces;
}

export interface StackDeployOptions {
  proxyMode: ProxyMode;
  server: string;
  deadline: number;
}

/**
 * How a slice written by our controller looks: the upstream managed-by value (it is a drop-in, and kube-proxy and
 * CoreDNS select on nothing else), and our controller's name as the field manager, which the apiserver takes from
 * the client's user agent. kube-controller-manager's own slice controller is off in the lab.
 */
export const sliceManagedBy = "endpointslice-controller.k8s.io";
export const sliceFieldManager = "switchyard-slice-controller";

export const writtenByOurController = (s: EndpointSlice) =>
  s.metadata?.labels?.["endpointslice.kubernetes.io/managed-by"] === sliceManagedBy &&
  (s.metadata.managedFields ?? []).some((f) => f.manager === sliceFieldManager);

/**
 * kube-controller-manager's EndpointSlice controller: the managed-by label it puts on its slices (ours puts the
 * same one, as a drop-in does) without our controller's field manager.
 */
export const writtenByUpstream = (s: EndpointSlice) =>
  s.metadata?.labels?.["endpointslice.kubernetes.io/managed-by"] === sliceManagedBy &&
  !writtenByOurController(s);

/** Whose EndpointSlice controller wrote a slice, for the stack that runs. */
export const writtenBy = (stack: StackKind) =>
  stack === "upstream" ? writtenByUpstream : writtenByOurController;

/**
 * Switchyard's stack from apps/{kube-proxy,slice-controller,cluster-dns}/deploy, set up for the lab: kube-proxy's
 * objects, and the rest (the slice controller and cluster DNS).
 */
export function switchyardStack(
  plan: StackLab,
  o: Omit<StackDeployOptions, "deadline">,
): { proxy: KubeObject[]; rest: KubeObject[] } {
  const parts = readStackParts(repoRoot);
  const lab = {
    proxyMode: o.proxyMode,
    server: o.server,
    clusterCidr: plan.clusterCidr,
    dnsIp: plan.dnsIp,
    ...(plan.ebpf ? { ebpf: plan.ebpf } : {}),
  };
  return {
    proxy: labStack(parts.proxy, lab),
    rest: labStack(parts.rest, lab),
  };
}

/**
 * kube-proxy's DaemonSet and what it needs. It tolerates every taint, so `up` applies it as soon as the control
 * plane answers, and each node's proxy starts while the node is still becoming Ready.
 */
export async function applyKubeProxy(
  client: HttpRestClient,
  plan: StackLab,
  o: Omit<StackDeployOptions, "deadline">,
) {
  await applyObjects(client, switchyardStack(plan, o).proxy);
}

/**
 * Deploys Switchyard's stack, then waits until it works: every node's proxy has synced (/healthz 200 on the node
 * address), the controller and DNS Deployments are Ready, and kube-dns has ready endpoints in a slice our
 * controller wrote. kube-proxy first, and the rest only once every node's proxy has synced, as in a kubeadm
 * cluster, where the proxy runs long before CoreDNS is scheduled: a pod that dials the apiserver's ClusterIP before
 * its node has the rule sends a SYN that conntrack records without NAT, its retransmits follow that entry, and
 * the connection hangs until the client gives up (30 s for cluster-dns's lists, 10 s for the slice controller's
 * start-up check, which then exits and restarts).
 */
export async function deployStack(
  client: HttpRestClient,
  plan: StackLab,
  o: StackDeployOptions,
  progress: Progress,
  exec: Exec,
) {
  const { proxy, rest } = switchyardStack(plan, o);
  progress.update(`applying kube-proxy (mode ${o.proxyMode}) from apps/kube-proxy/deploy`, true);
  await applyObjects(client, proxy);
  await waitForProxies(client, plan, o.deadline, progress, exec);
  progress.update(`applying ${rest.length} objects from apps/{slice-controller,cluster-dns}/deploy`, true);
  await applyObjects(client, rest);
  await waitForStack(client, plan, "switchyard", o.deadline, progress, exec);
}

/**
 * Waits until a stack works, Switchyard's or upstream's alike: every node's proxy has synced, the DNS Deployment
 * (and our controller's) is Ready, and kube-dns has ready endpoints in a slice the stack's controller wrote.
 */
export async function waitForStack(
  client: HttpRestClient,
  plan: StackLab,
  stack: StackKind,
  deadline: number,
  progress: Progress,
  exec: Exec,
) {
  await waitForProxies(client, plan, deadline, progress, exec);
  const deployments = stack === "switchyard" ? ["switchyard-slice-controller", "coredns"] : ["coredns"];
  for (const name of deployments)
    await waitUntil(`deployment ${name}`, () => deploymentReady(client, name), deadline, progress);
  await waitUntil("kube-dns endpoints", () => kubeDnsSliced(client, stack), deadline, progress);
}

/** Waits until every node's proxy has synced: its /healthz, and the `kubernetes` ClusterIP answering from the node. */
export async function waitForProxies(
  client: HttpRestClient,
  plan: StackLab,
  deadline: number,
  progress: Progress,
  exec: Exec,
) {
  await waitUntil("kube-proxy on every node", () => proxiesHealthy(client, plan, exec), deadline, progress);
}

async function proxiesHealthy(client: HttpRestClient, plan: StackLab, exec: Exec): Promise<true | string> {
  // All at once: the nodes' checks and the DaemonSet's count, whose status trails the pods by a controller pass.
  const [ds, synced] = await Promise.all([
    client.call<DaemonSet>("GET", "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy"),
    Promise.all(plan.nodeList.map((n) => proxySyncedOn(n, plan.serviceCidr, exec))),
  ]);
  const ready = ds.status?.numberReady ?? 0;
  if (ready < plan.nodes) return `${ready}/${plan.nodes} pods ready`;
  const unhealthy = plan.nodeList.filter((_, i) => !synced[i]).map((n) => n.name);
  return unhealthy.length === 0 ? true : `not synced yet on ${unhealthy.join(", ")}`;
}

/**
 * /healthz can be 200 before the first sync; what the other pods need is the `kubernetes` Service's ClusterIP
 * answering from the node, so that is checked too (any HTTP status from the apiserver will do).
 */
async function proxySyncedOn(
  n: StackLab["nodeList"][number],
  serviceCidr: string,
  exec: Exec,
): Promise<boolean> {
  const apiserverIp = firstServiceIp(serviceCidr);
  const res = await httpGet(`http://${hostPort(n.ip, 10256)}/healthz`).catch(() => ({ status: 0 }));
  if (res.status !== 200) return false;
  const viaService = await exec([
    ...(n.cgroup ? inCgroup(n.cgroup) : []),
    ...["ip", "netns", "exec", n.netns, "curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}"],
    ...["--max-time", "2", `https://${hostPort(apiserverIp, 443)}/livez`],
  ]).catch(() => "000");
  return viaService !== "000";
}

export async function deploymentReady(
  client: HttpRestClient,
  name: string,
  ns = "kube-system",
): Promise<true | string> {
  const d = await client.call<Deployment>("GET", `/apis/apps/v1/namespaces/${ns}/deployments/${name}`);
  const want = d.spec?.replicas ?? 1;
  const ready = d.status?.readyReplicas ?? 0;
  if (ready >= want) return true;
  // Which pods are behind, where, and why: the first thing to look at when a bring-up times out.
  const selector = Object.entries(d.spec?.selector?.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = await client
    .call<{ items: Pod[] }>(
      "GET",
      `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`,
    )
    .then((l) => l.items)
    .catch(() => []);
  const behind = pods.filter((p) => !isReady(p)).map(describePod);
  return `${ready}/${want} ready${behind.length ? ` (${behind.join("; ")})` : ""}`;
}

function isReady(p: Pod): boolean {
  return p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** `name on node: phase, why` for a pod that is not Ready; see `switchyard-lab logs ns/name` for more. */
function describePod(p: Pod): string {
  const where = p.spec?.nodeName ? ` on ${p.spec.nodeName}` : " (not scheduled)";
  const c = p.status?.containerStatuses?.[0];
  const why =
    c?.state?.waiting?.reason ??
    (c?.state?.terminated ? `exited ${c.state.terminated.exitCode}` : undefined) ??
    (c?.state?.running ? "running, not ready" : undefined) ??
    p.status?.reason ??
    "";
  return `${p.metadata?.name ?? "?"}${where}: ${p.status?.phase ?? "Unknown"}${why ? `, ${why}` : ""}`;
}

async function kubeDnsSliced(client: HttpRestClient, stack: StackKind): Promise<true | string> {
  const list = await client.call<{ items: EndpointSlice[] }>(
    "GET",
    `/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices?labelSelector=${encodeURIComponent("kubernetes.io/service-name=kube-dns")}`,
  );
  const theirs = list.items.filter(writtenBy(stack));
  const ready = theirs.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).length;
  return ready > 0 ? true : `${theirs.length} slices of the ${stack} controller, no ready endpoint`;
}
