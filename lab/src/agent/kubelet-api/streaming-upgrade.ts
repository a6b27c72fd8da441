import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "@switchyard/kube";
import { attachToContainer } from "./attach-to-container.js";
import { authenticatedUser } from "./authenticate.js";
import { authorizeRequest, type WebhookAuthorizer } from "./authorize.js";
import { connectInNetns } from "./connect-in-netns.js";
import type { PodSource } from "./container-logs.js";
import { execInContainer } from "./exec-in-container.js";
import { isRefusal, resolveStreamingTarget } from "./streaming-target.js";
import { handleAttach, handleExec, handlePortForward, type StreamingOptions } from "./streams.js";
import { rejectUpgrade } from "./upgrade.js";

/**
 * The HTTPS server's `upgrade` event: exec, attach and portForward sessions (the apiserver proxies `kubectl
 * exec`, `attach` and `port-forward` here as SPDY upgrades). The pod and container are looked up before the upgrade, so a
 * wrong name is a plain HTTP error the apiserver passes on. Resolves when the session is over.
 */
export async function serveStreamingUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  pods: PodSource,
  log: Logger,
  authorizer?: Pick<WebhookAuthorizer, "authorize">,
): Promise<void> {
  const user = authenticatedUser(req.socket);
  if (!user) return rejectUpgrade(socket, 401, "Unauthorized");
  const url = new URL(req.url ?? "/", "https://kubelet");
  const decision = await authorizeRequest(user, req.method ?? "", url, authorizer);
  if (!decision.allowed) return rejectUpgrade(socket, decision.status, decision.body.trimEnd());
  if (req.method !== "GET" && req.method !== "POST") return rejectUpgrade(socket, 405, "Method Not Allowed");
  const target = resolveStreamingTarget(url.pathname, pods);
  if (isRefusal(target)) return rejectUpgrade(socket, target.status, target.message);
  const pod = `${target.pod.object.metadata?.namespace}/${target.pod.object.metadata?.name}`;
  const options: StreamingOptions = {
    onError: (err) => log.warn(`kubelet API ${target.endpoint} failed`, { pod, error: err.message }),
  };
  switch (target.endpoint) {
    case "exec":
      return handleExec(req, socket, head, execInContainer(target.pid), options);
    case "portForward":
      return handlePortForward(req, socket, head, connectInNetns(target.netns), options);
    case "attach":
      return handleAttach(req, socket, head, attachToContainer(target.log, target.input), options);
  }
}
