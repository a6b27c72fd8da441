import { dashboardHint } from "../dashboard/defaults.js";
import type { KindLabState } from "../kind/state.js";
import { labDirHint } from "../netns/state.js";
import { stepTable } from "../timing/step-times.js";

/** What `up --runtime kind` prints at the end: the nodes, where the kubeconfig is, and things to try. */
export function kindUpSummary(state: KindLabState, stateDir: string): string {
  const stack = state.stack
    ? `, ${state.stack.kind ?? "switchyard"}'s stack deployed in ${state.stack.seconds.toFixed(1)}s (kube-proxy mode ${state.stack.proxyMode})`
    : " (no stack: --no-stack)";
  const worker = state.nodes.find((n) => n.role === "worker");
  return [
    `kind lab ready in ${state.upSeconds?.toFixed(1)}s: nodes in ${state.nodesSeconds?.toFixed(1) ?? "?"}s${stack}`,
    "",
    // Where the time went; overlapping rows ran at once.
    ...(state.steps?.length ? [...stepTable(state.steps), ""] : []),
    "NODE                        ROLE           ZONE",
    ...state.nodes.map((n) => `${n.name.padEnd(28)}${n.role.padEnd(15)}${n.zone}`),
    "",
    `apiserver:  ${state.server}`,
    `kubeconfig: ${state.kubeconfig}`,
    dashboardHint,
    ...labDirHint(stateDir),
    "",
    "Try:",
    "  npx switchyard-lab kubectl get pods -A -o wide",
    "  npx switchyard-lab kubectl get endpointslices -n kube-system --show-managed-fields -o yaml | grep manager:",
    ...(worker ? [tryRules(state, worker.name)] : []),
    ...(state.stack?.kind === "upstream"
      ? [
          "Swap Switchyard's images in (already loaded into the nodes):",
          "  npx switchyard-lab kubectl -n kube-system set image daemonset/kube-proxy kube-proxy=switchyard/kube-proxy:dev",
          "  npx switchyard-lab kubectl -n kube-system set image deployment/coredns coredns=switchyard/cluster-dns:dev",
        ]
      : []),
  ].join("\n");
}

/** Where a worker's proxy keeps its Services, in its mode: ebpf mode's pins are on the node's own bpffs. */
function tryRules(state: KindLabState, worker: string): string {
  const mode = state.stack?.proxyMode;
  if (mode === "nftables") return `  docker exec ${worker} nft list table ip kube-proxy`;
  if (mode === "ebpf" && state.ebpf) return `  docker exec ${worker} ls -R ${state.ebpf.pinRoot}`;
  return `  docker exec ${worker} iptables-save -t nat | grep KUBE-SVC`;
}
