import type { Node } from "kubernetes-types/core/v1.js";

/**
 * Ready, and without a node.kubernetes.io taint that keeps pods off (NoSchedule). The node-lifecycle controller
 * lifts its not-ready NoExecute taint only at its next 5 s pass; every pod tolerates that one for 300 s
 * (DefaultTolerationSeconds), so it neither keeps pods off nor evicts them meanwhile.
 */
export function acceptsPods(n: Node): boolean {
  const ready = n.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
  const keptOff = (n.spec?.taints ?? []).some(
    (t) => t.key.startsWith("node.kubernetes.io/") && t.effect !== "NoExecute",
  );
  return ready && !keptOff;
}
