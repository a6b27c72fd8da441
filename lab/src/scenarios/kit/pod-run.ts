import type { Pod } from "kubernetes-types/core/v1.js";
import type { Exec } from "../../exec.js";

/** Runs a command through an argv prefix (a node's or a pod's); "" when it fails (a probe's failure is data). */
export const runAt = (exec: Exec, at: readonly string[], argv: readonly string[]) =>
  exec([...at, ...argv]).catch(() => "");

/** The network namespace of a pod of a netns lab: `<prefix>-pod-n<node>-<uid8>`, found by its uid. */
export async function podNetns(exec: Exec, prefix: string, uid: string): Promise<string | undefined> {
  const list = await exec(["ip", "netns", "list"]);
  return list
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .find((n) => n.startsWith(`${prefix}-pod-`) && n.endsWith(`-${uid.slice(0, 8)}`));
}

/** A netns lab's pod: `ip netns exec` into the namespace its node agent made for it. */
export async function netnsPodRun(exec: Exec, prefix: string, pod: Pod): Promise<readonly string[]> {
  const netns = await podNetns(exec, prefix, pod.metadata?.uid ?? "");
  if (!netns) throw new Error(`pod ${pod.metadata?.name} has no network namespace (yet)`);
  return ["ip", "netns", "exec", netns];
}

/**
 * A kind lab's pod: nsenter, inside its node container, into the network namespace of the pod's sandbox (its
 * pause process, as crictl reports it). The command then runs with the node's tools in the pod's network, as
 * the netns lab's host tools do.
 */
export async function kindPodRun(exec: Exec, docker: string, pod: Pod): Promise<readonly string[]> {
  const node = pod.spec?.nodeName;
  const uid = pod.metadata?.uid ?? "";
  if (!node) throw new Error(`pod ${pod.metadata?.name} is not bound to a node`);
  const script =
    `id=$(crictl pods -q --state ready --label io.kubernetes.pod.uid=${uid} | head -1) && ` +
    `[ -n "$id" ] && crictl inspectp -o go-template --template '{{.info.pid}}' "$id"`;
  const pid = (await exec([docker, "exec", node, "sh", "-c", script]).catch(() => "")).trim();
  if (!/^\d+$/.test(pid))
    throw new Error(`pod ${pod.metadata?.name} has no running sandbox on ${node} (yet)`);
  return [docker, "exec", node, "nsenter", "-t", pid, "-n"];
}

/**
 * A kind lab's container: `crictl exec` inside its node container, so that the command runs with the container's
 * own files (its image's Node, say) in the pod's network, as `kubectl exec` would without the apiserver between.
 */
export async function kindContainerRun(
  exec: Exec,
  docker: string,
  pod: Pod,
  container: string,
): Promise<readonly string[]> {
  const node = pod.spec?.nodeName;
  if (!node) throw new Error(`pod ${pod.metadata?.name} is not bound to a node`);
  const uid = pod.metadata?.uid ?? "";
  const list = [
    ...[docker, "exec", node, "crictl", "ps", "-q", "--state", "running"],
    ...["--label", `io.kubernetes.pod.uid=${uid}`, "--name", `^${container}$`],
  ];
  const id = (await exec(list).catch(() => "")).split("\n")[0]?.trim() ?? "";
  if (!id)
    throw new Error(`pod ${pod.metadata?.name} has no running container ${container} on ${node} (yet)`);
  return [docker, "exec", node, "crictl", "exec", id];
}

/**
 * The pause image a kind node already holds (its sandbox image, which kubelet never pulls again): the scenarios'
 * idle pods run it, so that nothing is pulled where no registry answers.
 */
export async function kindSandboxImage(exec: Exec, node: readonly string[]): Promise<string> {
  const out = await exec([...node, "crictl", "images", "-o", "json"]);
  const images = (JSON.parse(out) as { images?: { repoTags?: string[] }[] }).images ?? [];
  const tag = images.flatMap((i) => i.repoTags ?? []).find((t) => /(^|\/)pause:/.test(t));
  if (!tag) throw new Error("the kind node holds no pause image (crictl images)");
  return tag;
}
