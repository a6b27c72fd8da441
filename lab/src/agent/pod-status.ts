import { formatTime } from "@switchyard/kube";
import type { ContainerState, Pod, PodCondition, PodStatus } from "kubernetes-types/core/v1.js";

export interface ContainerView {
  name: string;
  image: string;
  state: ContainerState;
  lastState: ContainerState;
  restartCount: number;
  ready: boolean;
}

export interface PodView {
  /** The node's addresses, one per family, the primary first. */
  hostIps: readonly string[];
  /** One per family, the primary first; empty until the sandbox has addresses. */
  podIps: readonly string[];
  startTime: string;
  sandboxReady: boolean;
  containers: ContainerView[];
}

function phaseOf(pod: Pod, containers: readonly ContainerView[]): PodStatus["phase"] {
  if (
    containers.some((c) => c.state.running) ||
    containers.some((c) => c.state.waiting?.reason === "CrashLoopBackOff")
  )
    return "Running";
  const done = containers.length > 0 && containers.every((c) => c.state.terminated);
  if (done && (pod.spec?.restartPolicy ?? "Always") !== "Always") {
    return containers.every((c) => c.state.terminated?.exitCode === 0) ? "Succeeded" : "Failed";
  }
  return "Pending";
}

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
      ...(reason && !ok ? { reason } : {}),
      ...(message && !ok ? { message } : {}),
    };
  };
  const containersReady = view.containers.length > 0 && view.containers.every((c) => c.ready);
  const phase = phaseOf(pod, view.containers);
  const gates = unreadyGates(pod, previous);
  const ready =
    containersReady && phase === "Running"
      ? condition("Ready", gates.length === 0, "ReadinessGatesNotReady", gates.join(", "))
      : condition("Ready", false, "ContainersNotReady");
  return {
    phase,
    hostIP: view.hostIps[0],
    hostIPs: view.hostIps.map((ip) => ({ ip })),
    ...(view.podIps.length > 0 ? { podIP: view.podIps[0], podIPs: view.podIps.map((ip) => ({ ip })) } : {}),
    startTime: view.startTime,
    qosClass: pod.status?.qosClass ?? "BestEffort",
    conditions: [
      condition("PodReadyToStartContainers", view.sandboxReady),
      condition("Initialized", true),
      ready,
      condition("ContainersReady", containersReady, "ContainersNotReady"),
      condition("PodScheduled", true),
      // Conditions others own (readiness gates, DisruptionTarget) are kept: the merge patch replaces the list.
      ...previous.filter((c) => !kubeletConditions.has(c.type)),
    ],
    containerStatuses: view.containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: "",
      ready: c.ready,
      started: c.state.running !== undefined,
      restartCount: c.restartCount,
      state: c.state,
      lastState: c.lastState,
    })),
  };
}
