import type { ContainerInput } from "../container-input.js";
import type { ContainerLog } from "../container-log.js";
import type { PodSource, RunningPod } from "./container-logs.js";

/** What a streaming request's path names, after the kubelet's lookups. */
export type StreamingTarget =
  | {
      endpoint: "exec" | "attach";
      pod: RunningPod;
      container: string;
      pid: number;
      log: ContainerLog;
      input: ContainerInput | undefined;
    }
  | { endpoint: "portForward"; pod: RunningPod; netns: string };

export interface Refusal {
  status: number;
  message: string;
}

export const streamingEndpoints = new Set(["exec", "attach", "portForward"]);

/**
 * Reads /exec|attach/{namespace}/{pod}[/{uid}]/{container} and /portForward/{namespace}/{pod}[/{uid}] and finds
 * what they name, refusing with the kubelet's status and words: 404 "pod does not exist" for an unknown pod,
 * "pod not found" for a uid that is not the running pod's, `container not found ("c")` for a container that is
 * not running (the kubelet answers that one 500 as its runtime's lookup failed; 404 says more here).
 */
export function resolveStreamingTarget(path: string, pods: PodSource): StreamingTarget | Refusal {
  const [endpoint = "", ...parts] = path.split("/").slice(1).map(decodeURIComponent);
  const arity = endpoint === "portForward" ? [2, 3] : [3, 4];
  if (!streamingEndpoints.has(endpoint) || !arity.includes(parts.length) || parts.some((p) => !p))
    return { status: 404, message: "404 page not found" };
  const [namespace = "", podName = ""] = parts;
  const pod = pods.pod(namespace, podName);
  if (!pod) return { status: 404, message: "pod does not exist" };
  const uid = parts.length === arity[1] ? parts[2] : undefined;
  if (uid && pod.object.metadata?.uid !== uid) return { status: 404, message: "pod not found" };
  if (endpoint === "portForward") {
    if (!pod.podNetns) return { status: 404, message: `pod not found ("${podName}_${namespace}")` };
    return { endpoint, pod, netns: pod.podNetns };
  }
  const container = parts[parts.length - 1] ?? "";
  const found = pod.container(container);
  if (found?.pid === undefined) return { status: 404, message: `container not found ("${container}")` };
  const { pid, log, input } = found;
  return { endpoint: endpoint as "exec" | "attach", pod, container, pid, log, input };
}

export const isRefusal = (t: StreamingTarget | Refusal): t is Refusal => "status" in t;
