import { dashboardHint } from "../dashboard/defaults.js";
import type { NodePlan } from "../netns/plan.js";
import { type LabState, labDirHint } from "../netns/state.js";
import { stepTable } from "../timing/step-times.js";

/** What `up` prints at the end: the nodes, where the kubeconfig is, and three things to try next. */
export function upSummary(state: LabState, stateDir: string): string {
  const { plan } = state;
  const first = plan.nodeList[0];
  const width = Math.max(...plan.nodeList.map((n) => n.netns.length)) + 2;
  const stack = state.stack
    ? `, ${state.stack.kind === "upstream" ? "upstream's stack (kubeadm's addons)" : "stack"} deployed in ${state.stack.seconds.toFixed(1)}s (kube-proxy mode ${state.stack.proxyMode})`
    : " (no stack: --no-stack)";
  const lines = [
    `lab ready in ${state.upSeconds?.toFixed(1)}s: nodes in ${state.nodesSeconds?.toFixed(1) ?? "?"}s${stack}`,
    "",
    ...(state.steps?.length ? [...stepTable(state.steps), ""] : []),
    `NODE        ZONE     ${"NAMESPACE".padEnd(width)}ADDRESSES`,
    ...plan.nodeList.map(
      (n) => `${n.name.padEnd(12)}${n.zone.padEnd(9)}${n.netns.padEnd(width)}${n.ips.join(" ")}`,
    ),
    "",
    `apiserver:  ${state.server}`,
    `kubeconfig: ${state.kubeconfig}`,
    dashboardHint,
    ...labDirHint(stateDir),
    "",
    "Try:",
    "  npx switchyard-lab kubectl get pods -A -o wide",
    "  npx switchyard-lab kubectl create deployment echo --image=switchyard/echo:0.1.0 --replicas=3 && npx switchyard-lab kubectl expose deployment echo --port=9000",
    first ? tryRules(state.stack?.proxyMode, first) : "",
  ];
  return lines.join("\n");
}

/** Where the first node's proxy keeps its Services, in its mode. */
function tryRules(mode: string | undefined, node: NodePlan): string {
  if (mode === "nftables") return `  ip netns exec ${node.netns} nft list table ip kube-proxy`;
  // ebpf mode's programs sit on the node's cgroup, which `ip netns exec` would hide: bpftool from the host.
  if (mode === "ebpf" && node.cgroup) return `  bpftool cgroup show ${node.cgroup}; ls -R ${node.pinRoot}`;
  return `  ip netns exec ${node.netns} iptables-save -t nat | grep KUBE-SVC`;
}
