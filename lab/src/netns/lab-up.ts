import { accessSync, constants, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type HttpRestClient, isAlreadyExists, realClock, sleep } from "@switchyard/kube";
import {
  adminCredentials,
  type ControlPlanePorts,
  up as controlPlaneUp,
  isOurs,
  labClient,
  lastLines,
  startDetached,
} from "@switchyard/testbed/controlplane";
import { ensurePrivateDir } from "@switchyard/testbed/private-files";
import { Progress, type ProgressSink } from "@switchyard/testbed/progress";
import type { Node } from "kubernetes-types/core/v1.js";
import { type Exec, realExec } from "../exec.js";
import { labEntry } from "../self.js";
import { applyKubeProxy, deployStack } from "../stack/deploy.js";
import { bpffsMount, ebpfMounts } from "../stack/ebpf-places.js";
import { type ProxyMode, type StackKind, upstreamNoEbpf } from "../stack/manifests.js";
import { deployUpstreamStack } from "../stack/upstream.js";
import { StepClock } from "../timing/step-times.js";
import { applySteps } from "./executor.js";
import { Journal } from "./journal.js";
import { labDown } from "./lab-down.js";
import { type LimitMounts, limitMounts } from "./limit-places.js";
import { acceptsPods } from "./node-readiness.js";
import { defaultLabInput, type LabInput, type LabPlan, networksFor, planLab } from "./plan.js";
import { type LabState, labPaths, readLabState, writeLabState } from "./state.js";
import { bridgeSteps, ebpfPlaceSteps, nodeSteps, podRouteSteps } from "./steps.js";

export interface LabUpOptions {
  stateDir: string;
  lab?: Partial<LabInput>;
  ports?: Partial<ControlPlanePorts>;
  readyTimeoutMs?: number;
  /** Detached (the CLI) outlives the caller; tests keep the agents attached. */
  detached?: boolean;
  out?: ProgressSink;
  exec?: Exec;
  /** Deploy Switchyard's stack from apps/<app>/deploy with this kube-proxy mode; without it, nodes only. */
  stack?: ProxyMode;
  /** Whose stack: Switchyard's (the default) or upstream's, as kubeadm installs it (stack/upstream.ts). */
  stackKind?: StackKind;
}

/** How long bring-up waits for the nodes and then the stack, from the control plane's start (`up --timeout`). */
export const defaultNetnsReadyTimeoutMs = 120_000;

/**
 * Brings a lab up: the bridge and node namespaces, the control plane on the bridge, one agent per node, the pod
 * CIDR routes once the controller-manager has allocated them; returns when every node is Ready and takes pods (node-readiness.ts), and the stack works.
 * A previous lab in the same folder (a crash) is removed first; a failed `up` removes what it created.
 */
export async function labUp(o: LabUpOptions): Promise<LabState> {
  if (process.getuid?.() !== 0)
    throw new Error("the netns runtime needs root (network namespaces, veth, routes)");
  const exec = o.exec ?? realExec;
  const progress = new Progress("lab", o.out ?? process.stderr);
  const started = Date.now();
  const paths = labPaths(o.stateDir);
  if (readLabState(o.stateDir) || existsSync(paths.journal)) {
    progress.update("cleaning up the previous lab", true);
    await labDown(o.stateDir, { keepFiles: true, exec });
  }
  const host = await hostEbpfMounts(exec);
  if (o.stack === "ebpf" && o.stackKind === "upstream") throw new Error(upstreamNoEbpf);
  if (o.stack === "ebpf" && host.missing) throw new Error(`ebpf mode cannot work here: ${host.missing}`);
  // Ranges not given follow the families asked for (networksFor), as `up --ip-family` defaults them.
  const input = { ...defaultLabInput, ...networksFor(o.lab?.ipFamily ?? "ipv4"), ...o.lab };
  const plan = planLab(
    input,
    host.missing ? undefined : host.cgroup2Mount,
    hostLimitMounts(host.cgroup2Mount),
  );
  const foreign = await exec(["ip", "link", "show", plan.bridge]).then(
    () => true,
    () => false,
  );
  if (foreign)
    throw new Error(`a link named ${plan.bridge} already exists (another lab?); pick another --prefix`);
  ensurePrivateDir(o.stateDir);
  mkdirSync(paths.logs, { recursive: true });
  const state: LabState = {
    runtime: "netns",
    plan,
    server: "",
    kubeconfig: "",
    agents: [],
    startedAt: new Date().toISOString(),
  };
  writeLabState(o.stateDir, state);
  const clock = new StepClock(Date.now);
  try {
    await bringUp(o, plan, state, exec, progress, clock);
  } catch (err) {
    await labDown(o.stateDir, { keepFiles: true, exec }).catch(() => {});
    // The logs outlive the lab: say where, since the error alone rarely says why a pod never got ready.
    if (err instanceof Error) err.message += ` (lab removed; logs kept: switchyard-lab logs <component>)`;
    throw err;
  }
  state.upSeconds = (Date.now() - started) / 1000;
  state.steps = clock.times;
  writeLabState(o.stateDir, state);
  const stack = o.stack
    ? ` with ${o.stackKind === "upstream" ? "upstream's" : "the"} stack (kube-proxy ${o.stack})`
    : "";
  progress.done(`${plan.nodes} nodes ready${stack}, apiserver at ${state.server}`);
  return state;
}

async function bringUp(
  o: LabUpOptions,
  plan: LabPlan,
  state: LabState,
  exec: Exec,
  progress: Progress,
  clock: StepClock,
) {
  const started = Date.now();
  const paths = labPaths(o.stateDir);
  const journal = new Journal(paths.journal);
  progress.update("creating the bridge, the node namespaces and their cgroups", true);
  await clock.time("namespaces, veths, cgroups", () =>
    applySteps(
      [...bridgeSteps(plan), ...ebpfPlaceSteps(plan), ...plan.nodeList.flatMap((n) => nodeSteps(plan, n))],
      exec,
      journal,
    ),
  );
  const cp = await clock.time("control plane", () => startControlPlane(o, plan, state));
  const client = labClient(adminCredentials(cp.server, paths.controlPlane));
  try {
    await clock.time("node agents started", async () => startAgents(o, plan, state));
    if (o.stack && o.stackKind !== "upstream") {
      const proxy = { proxyMode: o.stack, server: cp.server };
      await clock.time("kube-proxy applied", () => applyKubeProxy(client, plan, proxy));
    }
    const deadline = Date.now() + (o.readyTimeoutMs ?? defaultNetnsReadyTimeoutMs);
    // One pod CIDR per family (spec.podCIDRs, the primary first), joined: a dual-stack node has both at once.
    const cidrs = await clock.time("pod CIDRs allocated", () =>
      waitForNodes(client, plan, state, deadline, progress, "pod CIDRs", (n) =>
        n.spec?.podCIDRs?.length ? n.spec.podCIDRs.join(",") : n.spec?.podCIDR,
      ),
    );
    await clock.time("pod routes", () => applySteps(podRouteSteps(plan, cidrs), exec, journal));
    // The stack goes on while the nodes finish: it waits for each node's proxy itself before anything else is
    // applied, and its pods are scheduled once their node's Ready.
    const nodesReady = async () => {
      await clock.time("nodes Ready", () =>
        waitForNodes(client, plan, state, deadline, progress, "nodes Ready", (n) =>
          acceptsPods(n) ? "ok" : undefined,
        ),
      );
      await clock.time("default ServiceAccount", async () => {
        while (!(await hasDefaultServiceAccount(client))) {
          if (Date.now() > deadline) throw new Error("the default ServiceAccount was not created in time");
          progress.update("waiting for the default ServiceAccount");
          await sleep(realClock, 250);
        }
      });
      state.nodesSeconds = (Date.now() - started) / 1000;
    };
    const proxyMode = o.stack;
    const stack = async () => {
      if (!proxyMode) return;
      const stackStarted = Date.now();
      const kind = o.stackKind ?? "switchyard";
      await clock.time(`${kind === "upstream" ? "upstream's" : "the"} stack`, () =>
        deployLabStack({ ...o, stack: proxyMode }, plan, cp, client, deadline, progress, exec),
      );
      state.stack = { kind, proxyMode, seconds: (Date.now() - stackStarted) / 1000 };
    };
    await allSettledOrFirstError([nodesReady(), stack()]);
  } finally {
    client.close();
  }
}

/** The control plane on the bridge, and the binding that lets the apiserver reach the node agents. */
async function startControlPlane(o: LabUpOptions, plan: LabPlan, state: LabState) {
  const paths = labPaths(o.stateDir);
  const cp = await controlPlaneUp({
    stateDir: paths.controlPlane,
    apiserverBindAddress: plan.gateway,
    serviceCidr: plan.serviceCidr,
    clusterCidr: plan.clusterCidr,
    ...(o.ports ? { ports: o.ports } : {}),
    ...(o.readyTimeoutMs ? { readyTimeoutMs: o.readyTimeoutMs } : {}),
    detached: o.detached ?? true,
    out: o.out ?? process.stderr,
    sliceControllers: o.stack !== undefined && o.stackKind === "upstream",
  });
  state.server = cp.server;
  state.kubeconfig = cp.kubeconfig;
  writeLabState(o.stateDir, state);
  await allowApiserverToKubelets(labClient(adminCredentials(cp.server, paths.controlPlane)));
  return cp;
}

/** The lab's upstream resolver on the gateway and one agent per node, each recorded before the next starts. */
function startAgents(o: LabUpOptions, plan: LabPlan, state: LabState): void {
  const paths = labPaths(o.stateDir);
  const detached = o.detached ?? true;
  const [dnsBin, ...dnsEntry] = labEntry("agent/upstream-dns");
  const dnsArgs = [...dnsEntry, "--address", plan.gateway];
  const dnsLog = join(paths.logs, "upstream-dns.log");
  state.agents.push(startDetached("upstream-dns", dnsBin ?? process.execPath, dnsArgs, dnsLog, detached));
  writeLabState(o.stateDir, state);
  const [bin, ...entry] = labEntry("agent/main");
  for (const node of plan.nodeList) {
    const args = [...entry, "--state-dir", o.stateDir, "--node", node.name];
    const log = join(paths.logs, `agent-${node.name}.log`);
    state.agents.push(startDetached(`agent-${node.name}`, bin ?? process.execPath, args, log, detached));
    writeLabState(o.stateDir, state);
  }
}

/** Switchyard's stack from apps/<app>/deploy, or upstream's as kubeadm installs it; returns once it works. */
async function deployLabStack(
  o: LabUpOptions & { stack: ProxyMode },
  plan: LabPlan,
  cp: { server: string; kubeconfig: string },
  client: HttpRestClient,
  deadline: number,
  progress: Progress,
  exec: Exec,
) {
  if (o.stackKind === "upstream") {
    const upstream = { proxyMode: o.stack, server: cp.server, kubeconfig: cp.kubeconfig, dir: o.stateDir };
    await deployUpstreamStack(client, plan, { ...upstream, deadline }, progress, exec);
  } else await deployStack(client, plan, { proxyMode: o.stack, server: cp.server, deadline }, progress, exec);
}

/**
 * The file systems ebpf mode stands on, as this machine has them: the cgroup2 mount must also be writable (a
 * container's read-only one is not) for the lab to make its nodes' directories. Every lab gets them when they are
 * there, whatever its mode, so that `migrate --to ebpf` finds every pod already in its node's cgroup.
 */
async function hostEbpfMounts(exec: Exec): Promise<{ cgroup2Mount?: string; missing?: string }> {
  const mountinfo = () => readFileSync("/proc/self/mountinfo", "utf8");
  let found = ebpfMounts(mountinfo());
  // Most distributions mount the BPF file system at boot; a fresh VM or container may not have, and the proxy
  // mounts it itself in ebpf mode (as Cilium does). The lab does the same, so that its nodes get their places
  // whichever mode comes first.
  if (found.missing?.includes(bpffsMount)) {
    await exec(["mount", "-t", "bpf", "bpf", bpffsMount]).catch(() => undefined);
    found = ebpfMounts(mountinfo());
  }
  if (found.missing || !found.cgroup2Mount) return found;
  try {
    accessSync(found.cgroup2Mount, constants.W_OK);
    return found;
  } catch (err) {
    return { missing: `the cgroup2 mount ${found.cgroup2Mount} is not writable (${(err as Error).message})` };
  }
}

/**
 * What kubeadm init binds for the apiserver's kubelet client (CN kube-apiserver-kubelet-client, group
 * kubeadm:cluster-admins): cluster-admin, so the node agents' webhook authorization (kubelet-api/authorize.ts)
 * lets the apiserver's logs, exec and proxy requests through. Made before the agents start, since their
 * SubjectAccessReview answers are cached (a denial for 30 s).
 */
async function allowApiserverToKubelets(client: HttpRestClient): Promise<void> {
  try {
    await client.call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "kubeadm:cluster-admins" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "kubeadm:cluster-admins" }],
    });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  } finally {
    client.close();
  }
}

/** Waits for every promise; the first failure is thrown once all have settled, so nothing runs on unobserved. */
async function allSettledOrFirstError(work: Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(work);
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}

async function hasDefaultServiceAccount(client: HttpRestClient): Promise<boolean> {
  return client.call("GET", "/api/v1/namespaces/default/serviceaccounts/default").then(
    () => true,
    () => false,
  );
}

/** Polls the Node list until `pick` yields a value for every node; fails early when an agent died. */
async function waitForNodes(
  client: HttpRestClient,
  plan: LabPlan,
  state: LabState,
  deadline: number,
  progress: Progress,
  what: string,
  pick: (n: Node) => string | undefined,
): Promise<Map<string, string>> {
  for (;;) {
    const list = await client.call<{ items: Node[] }>("GET", "/api/v1/nodes");
    const found = new Map<string, string>();
    for (const n of list.items) {
      const value = pick(n);
      if (value && n.metadata?.name) found.set(n.metadata.name, value);
    }
    if (plan.nodeList.every((n) => found.has(n.name))) return found;
    const dead = state.agents.find((a) => !isOurs(a));
    if (dead)
      throw new Error(
        `${dead.name} exited during start-up; last lines of ${dead.log}:\n${lastLines(dead.log, 5)}`,
      );
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${found.size}/${plan.nodes})`);
    progress.update(`waiting for ${what} (${found.size}/${plan.nodes})`);
    await sleep(realClock, 250);
  }
}

/** Where this host's memory and cpu controllers are (limit-places.ts). */
function hostLimitMounts(cgroup2Mount: string | undefined): LimitMounts | undefined {
  let controllers = "";
  try {
    if (cgroup2Mount) controllers = readFileSync(`${cgroup2Mount}/cgroup.controllers`, "utf8");
  } catch {}
  return limitMounts(readFileSync("/proc/self/mountinfo", "utf8"), controllers);
}
