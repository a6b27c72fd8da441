import { formatTime } from "@switchyard/kube";
import type { ContainerState, Pod, PodCondition, PodStatus } from "kubernetes-types/core/v1.js";

export interface ContainerView {
  name: string;
  image: string;
  state: ContainerState;
  lastState: ContainerState;
  restartCount: number;
  ready: boolean;
  /** Running and past its startup probe; running when undefined (a container without one). */
  started?: boolean;
}

/** An init container; a restartable one (restartPolicy Always) is a sidecar that runs beside the main ones. */
export interface InitContainerView extends ContainerView {
  restartable: boolean;
}

export interface PodView {
  /** The node's addresses, one per family, the primary first. */
  hostIps: readonly string[];
  /** One per family, the primary first; empty until the sandbox has addresses. */
  podIps: readonly string[];
  startTime: string;
  sandboxReady: boolean;
  containers: ContainerView[];
  /** In the spec's order; empty for a pod without init containers. */
  initContainers?: InitContainerView[];
  /** The agent ended the pod (an eviction): phase Failed, with this reason and message. */
  terminal?: { reason: string; message: string };
}

/** A container has started once it runs and its startup probe, if any, has passed. */
const started = (c: ContainerView) => c.state.running !== undefined && c.started !== false;
/** The kubelet's HasAnyRegularContainerStarted: a main container has run, so the pod was initialized once. */
const anyMainStarted = (view: PodView) =>
  view.containers.some((c) => c.state.running !== undefined || c.state.terminated !== undefined);
const lastFailed = (c: ContainerView) =>
  c.lastState.terminated !== undefined && c.lastState.terminated.exitCode !== 0;

/** Regular init containers still to finish, and those that failed (the kubelet's getPhase, first half). */
function initProgress(inits: readonly InitContainerView[]) {
  let pending = 0;
  let failed = 0;
  for (const c of inits) {
    if (c.restartable) {
      if (c.state.waiting && !c.lastState.terminated) pending++;
    } else if (c.state.terminated) {
      if (c.state.terminated.exitCode !== 0) failed++;
    } else if (c.state.waiting && c.lastState.terminated) {
      if (lastFailed(c)) failed++;
    } else pending++;
  }
  return { pending, failed };
}

/** The pod's phase as the kubelet's getPhase computes it, for a pod that is not terminal yet. */
function phaseOf(pod: Pod, view: PodView): PodStatus["phase"] {
  const inits = view.initContainers ?? [];
  const { pending, failed } = initProgress(inits);
  const restartPolicy = pod.spec?.restartPolicy ?? "Always";
  if (failed > 0 && restartPolicy === "Never") return "Failed";
  // Sidecars count as running or waiting; stopped ones do not count at all.
  const sidecars = inits.filter((c) => c.restartable);
  let running = sidecars.filter((c) => c.state.running).length;
  let waiting = sidecars.filter((c) => c.state.waiting && !c.lastState.terminated).length;
  let stopped = 0;
  let succeeded = 0;
  for (const c of view.containers) {
    if (c.state.running) running++;
    else if (c.state.terminated) {
      stopped++;
      if (c.state.terminated.exitCode === 0) succeeded++;
    } else if (c.lastState.terminated) stopped++;
    else waiting++;
  }
  if ((pending > 0 && !anyMainStarted(view)) || waiting > 0) return "Pending";
  if (running > 0) return "Running";
  if (stopped === 0) return "Pending";
  if (restartPolicy === "Always") return "Running";
  if (stopped === succeeded) return "Succeeded";
  return restartPolicy === "Never" ? "Failed" : "Running";
}

/** Go prints a list of names as [a b]. */
const goList = (names: readonly string[]) => `[${names.join(" ")}]`;

const kubeletConditions = new Set([
  "PodReadyToStartContainers",
  "Initialized",
  "Ready",
  "ContainersReady",
  "PodScheduled",
]);

/** Why each readiness gate holds the pod back, in the kubelet's words (GeneratePodReadyCondition); none: ready. */
function unreadyGates(pod: Pod, conditions: readonly PodCondition[]): string[] {
  const out: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (!c) out.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    else if (c.status !== "True")
      out.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`);
  }
  return out;
}

/** The kubelet's Initialized: every regular init container succeeded and every sidecar started. */
function initialized(
  view: PodView,
  phase: PodStatus["phase"],
): { ok: boolean; reason?: string; message?: string } {
  if (phase === "Succeeded") return { ok: true, reason: "PodCompleted" };
  if (anyMainStarted(view)) return { ok: true };
  const incomplete = (view.initContainers ?? [])
    .filter((c) => (c.restartable ? !started(c) : !c.ready))
    .map((c) => c.name);
  if (incomplete.length === 0) return { ok: true };
  const message = `containers with incomplete status: ${goList(incomplete)}`;
  return { ok: false, reason: "ContainersNotInitialized", message };
}

/** The kubelet's ContainersReady: every main container and every sidecar ready. */
function containersReady(
  view: PodView,
  phase: PodStatus["phase"],
): { ok: boolean; reason?: string; message?: string } {
  if (phase === "Succeeded") return { ok: false, reason: "PodCompleted" };
  if (phase === "Failed") return { ok: false, reason: "PodFailed" };
  const sidecars = (view.initContainers ?? []).filter((c) => c.restartable);
  const unready = [...sidecars, ...view.containers].filter((c) => !c.ready).map((c) => c.name);
  if (view.containers.length === 0) return { ok: false, reason: "ContainersNotReady" };
  if (unready.length === 0) return { ok: true };
  return {
    ok: false,
    reason: "ContainersNotReady",
    message: `containers with unready status: ${goList(unready)}`,
  };
}

const statusOf = (c: ContainerView) => ({
  name: c.name,
  image: c.image,
  imageID: "",
  ready: c.ready,
  started: started(c),
  restartCount: c.restartCount,
  state: c.state,
  lastState: c.lastState,
});

/** The pod's status as the kubelet would post it; transition times are kept while a condition holds. */
export function podStatus(pod: Pod, view: PodView, now: Date): PodStatus {
  const previous = pod.status?.conditions ?? [];
  const condition = (type: string, ok: boolean, reason?: string, message?: string): PodCondition => {
    const before = previous.find((c) => c.type === type);
    const status = ok ? "True" : "False";
    return {
      type,
      status,
      lastTransitionTime:
        before?.status === status && before.lastTransitionTime
          ? before.lastTransitionTime
          : formatTime(now.getTime()),
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
    };
  };
  const phase = view.terminal ? "Failed" : phaseOf(pod, view);
  const init = initialized(view, phase);
  const containers = containersReady(view, phase);
  const gates = unreadyGates(pod, previous);
  const ready = !containers.ok
    ? condition("Ready", false, containers.reason, containers.message)
    : condition(
        "Ready",
        gates.length === 0,
        gates.length > 0 ? "ReadinessGatesNotReady" : undefined,
        gates.join(", ") || undefined,
      );
  const inits = view.initContainers ?? [];
  return {
    phase,
    ...(view.terminal ? { reason: view.terminal.reason, message: view.terminal.message } : {}),
    hostIP: view.hostIps[0],
    hostIPs: view.hostIps.map((ip) => ({ ip })),
    ...(view.podIps.length > 0 ? { podIP: view.podIps[0], podIPs: view.podIps.map((ip) => ({ ip })) } : {}),
    startTime: view.startTime,
    qosClass: pod.status?.qosClass ?? "BestEffort",
    conditions: [
      condition("PodReadyToStartContainers", view.sandboxReady),
      condition("Initialized", init.ok, init.reason, init.message),
      ready,
      condition("ContainersReady", containers.ok, containers.reason, containers.message),
      condition("PodScheduled", true),
      // Conditions others own (readiness gates, DisruptionTarget) are kept: the merge patch replaces the list.
      ...previous.filter((c) => !kubeletConditions.has(c.type)),
    ],
    ...(inits.length > 0 ? { initContainerStatuses: inits.map(statusOf) } : {}),
    containerStatuses: view.containers.map(statusOf),
  };
}
