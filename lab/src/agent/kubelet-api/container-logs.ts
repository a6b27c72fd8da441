import type { IncomingMessage, ServerResponse } from "node:http";
import type { Pod } from "kubernetes-types/core/v1.js";
import type { ContainerInput } from "../container-input.js";
import type { ContainerLog } from "../container-log.js";
import { type ContainerLogView, logInstance } from "./log-instance.js";
import { isQueryError, type LogQuery, parseLogQuery, type QueryError } from "./log-query.js";
import { LogSelection } from "./log-selection.js";

/** What the API needs of the pods this agent runs (the Kubelet and its pod workers). */
export interface PodSource {
  pods(): Pod[];
  pod(namespace: string, name: string): RunningPod | undefined;
}

/** What the API reaches of one container: its state for the log's instance, its log, its running process. */
export interface ContainerHandle {
  view: ContainerLogView;
  log: ContainerLog;
  pid: number | undefined;
  /** Its stdin and terminal when the spec asks for them (attach feeds them). */
  input?: ContainerInput;
}

export interface RunningPod {
  object: Pod;
  /** The network namespace its containers share (the node's for hostNetwork); undefined before the sandbox. */
  podNetns: string | undefined;
  /** The container's log, status and running process; undefined while the worker has not made it yet. */
  container(name: string): ContainerHandle | undefined;
}

const plain = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(body);
};

type Resolved =
  | { refused: QueryError }
  | { query: LogQuery; log: ContainerLog; instance: number; refused?: undefined };

/** The kubelet's checks in its order: the path, the query, the pod, the container, the instance to read. */
function resolveRequest(url: URL, pods: PodSource): Resolved {
  const [namespace = "", podName = "", containerName = ""] = url.pathname
    .split("/")
    .slice(2)
    .map(decodeURIComponent);
  const refuse = (status: number, message: string) => ({ refused: { status, message } });
  if (!podName) return refuse(400, `{"message": "Missing podID."}`);
  if (!containerName) return refuse(400, `{"message": "Missing container name."}`);
  if (!namespace) return refuse(400, `{"message": "Missing podNamespace."}`);
  const query = parseLogQuery(url.searchParams, Date.now());
  if (isQueryError(query)) return { refused: query };
  const pod = pods.pod(namespace, podName);
  if (!pod) return refuse(404, `pod "${podName}" does not exist`);
  const inSpec = (pod.object.spec?.containers ?? []).some((c) => c.name === containerName);
  if (!inSpec) return refuse(404, `container "${containerName}" not found in pod "${podName}"`);
  const container = pod.container(containerName);
  if (!container) return refuse(400, `container "${containerName}" in pod "${podName}" is not available`);
  const chosen = logInstance(container.view, query.previous, podName, containerName);
  if ("error" in chosen) return refuse(400, chosen.error);
  return { query, log: container.log, instance: chosen.instance };
}

/**
 * GET /containerLogs/{namespace}/{pod}/{container}: the log of the chosen instance, and with `follow` every line
 * the running instance writes until it exits, the byte limit is spent or the client goes away.
 */
export function serveContainerLogs(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  pods: PodSource,
): void {
  const resolved = resolveRequest(url, pods);
  if (resolved.refused) {
    plain(res, resolved.refused.status, resolved.refused.message);
    return;
  }
  const { query, log, instance } = resolved;
  const selection = new LogSelection(query);
  res.writeHead(200, { "Content-Type": "text/plain" });
  res.write(selection.initial(log.lines(instance)));
  const live = log.current;
  const following = query.follow && live?.running && live.instance === instance;
  if (!following || selection.exhausted) {
    res.end();
    return;
  }
  // Subscribed in the same turn as the read above, so no line falls between the two.
  const stop = log.follow(
    (lines) => {
      res.write(selection.more(lines));
      if (selection.exhausted) finish();
    },
    () => finish(),
  );
  function finish() {
    stop();
    res.end();
  }
  req.on("close", stop);
}
