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
  hostIp: string;
  /** Undefined until the sandbox has an address. */
  podIp: string | undefined;
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

/** The pod's status as the kubelet would post it; transition times are kept while a condition holds. */
export function podStatus(pod: Pod, view: PodView, now: Date): PodStatus {
  const previous = pod.status?.conditions ?? [];
  const condition = (type: string, ok: boolean, reason?: string): PodCondition => {
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
    };
  };
  const containersReady = view.containers.length > 0 && view.containers.every((c) => c.ready);
  const phase = phaseOf(pod, view.containers);
  return {
    phase,
    hostIP: view.hostIp,
    hostIPs: [{ ip: view.hostIp }],
    ...(view.podIp ? { podIP: view.podIp, podIPs: [{ ip: view.podIp }] } : {}),
    startTime: view.startTime,
    qosClass: pod.status?.qosClass ?? "BestEffort",
    conditions: [
      condition("PodReadyToStartContainers", view.sandboxReady),
      condition("Initialized", true),
      condition("Ready", containersReady && phase === "Running", "ContainersNotReady"),
      condition("ContainersReady", containersReady, "ContainersNotReady"),
      condition("PodScheduled", true),
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
