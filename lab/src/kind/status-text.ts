import type { Node, Pod } from "kubernetes-types/core/v1.js";

/** `status` for a kind lab: nodes (Ready, role, zone, pod CIDR) and every pod, from `kubectl get -o json`. */
export function kindStatusText(
  header: string[],
  nodes: readonly Node[],
  pods: readonly Pod[],
): { healthy: boolean; text: string } {
  // Columns as wide as their longest entry (plus two spaces), as kubectl prints them.
  const nodeWidth = Math.max(4, ...nodes.map((n) => (n.metadata?.name ?? "").length)) + 2;
  const podName = (p: Pod) => `${p.metadata?.namespace}/${p.metadata?.name}`;
  const podWidth = Math.max(3, ...pods.map((p) => podName(p).length)) + 2;
  const lines = [...header, "", `${"NODE".padEnd(nodeWidth)}READY  ROLE           ZONE     POD CIDR`];
  let allReady = nodes.length > 0;
  for (const n of nodes) {
    const ready = n.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
    allReady &&= ready;
    const labels = n.metadata?.labels ?? {};
    const role = "node-role.kubernetes.io/control-plane" in labels ? "control-plane" : "worker";
    const zone = labels["topology.kubernetes.io/zone"] ?? "-";
    lines.push(
      `${(n.metadata?.name ?? "").padEnd(nodeWidth)}${(ready ? "yes" : "no").padEnd(7)}${role.padEnd(15)}${zone.padEnd(9)}${n.spec?.podCIDR ?? "-"}`,
    );
  }
  lines.push("", `${"POD".padEnd(podWidth)}PHASE      READY  IP              NODE`);
  for (const p of pods) {
    const ready = p.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
    lines.push(
      `${podName(p).padEnd(podWidth)}${(p.status?.phase ?? "-").padEnd(11)}${(ready ? "yes" : "no").padEnd(7)}${(p.status?.podIP ?? "-").padEnd(16)}${p.spec?.nodeName ?? "-"}`,
    );
  }
  return { healthy: allReady, text: lines.join("\n") };
}
