import type { ContainerState } from "kubernetes-types/core/v1.js";

export interface ContainerLogView {
  state: ContainerState;
  lastState: ContainerState;
  /** The newest instance that wrote a log (its restart count) and whether it still runs; none: never started. */
  current: { instance: number; running: boolean } | undefined;
}

/**
 * Which instance's log a request reads, or why there is none, worded as the kubelet's validateContainerLogStatus
 * words it (the apiserver passes the message on, as a 400). `previous` is the instance that lastState describes:
 * the one before the running one, or, while a crashed container waits for its restart, the one that just ended.
 */
export function logInstance(
  c: ContainerLogView,
  previous: boolean,
  pod: string,
  container: string,
): { instance: number } | { error: string } {
  const current = c.current;
  if (previous) {
    if (!c.lastState.terminated || !current)
      return { error: `previous terminated container "${container}" in pod "${pod}" not found` };
    return { instance: current.running ? current.instance - 1 : current.instance };
  }
  if (current) return { instance: current.instance };
  // The pause image runs no process: a running container with nothing written, an empty log.
  if (c.state.running) return { instance: 0 };
  if (c.state.terminated) return { error: `container "${container}" in pod "${pod}" is terminated` };
  const reason = c.state.waiting?.reason;
  if (reason === "ErrImagePull")
    return { error: `container "${container}" in pod "${pod}" is waiting to start: image can't be pulled` };
  if (reason) return { error: `container "${container}" in pod "${pod}" is waiting to start: ${reason}` };
  return { error: `container "${container}" in pod "${pod}" is waiting to start - no logs yet` };
}
