import { type ClusterAccess, loadKubeConfig } from "@switchyard/kube";
import { kindToolsOnThisMachine } from "../kind/machine-tools.js";
import { readKindState } from "../kind/state.js";
import { readLabState } from "../netns/state.js";
import type { DashboardView } from "./view-model.js";

/** What the dashboard needs of a lab, on either runtime. */
export interface DashboardLab {
  lab: DashboardView["lab"];
  access: ClusterAccess;
  /**
   * The argv prefix that runs a command in a node's network namespace, where its proxy serves metrics on
   * loopback and its pods are one hop away: `ip netns exec <ns>` (netns), `docker exec <node>` (kind).
   * Undefined for a node the lab did not make.
   */
  nodeShell(node: string): readonly string[] | undefined;
}

/** The lab in `stateDir`; one line saying what to do when there is none. */
export async function openDashboardLab(stateDir: string): Promise<DashboardLab> {
  const kind = readKindState(stateDir);
  if (kind) {
    if (!kind.server)
      throw new Error(`the kind lab in ${stateDir} is not up (its up did not finish); run switchyard-lab up`);
    const { docker } = await kindToolsOnThisMachine(process.stderr);
    const names = new Set(kind.nodes.map((n) => n.name));
    return {
      lab: { runtime: "kind", name: kind.input.name },
      access: loadKubeConfig({ kubeconfig: kind.kubeconfig }),
      nodeShell: (node) => (names.has(node) ? [docker, "exec", node] : undefined),
    };
  }
  const state = readLabState(stateDir);
  if (!state?.server) throw new Error(`no lab in ${stateDir}; run switchyard-lab up`);
  const netns = new Map(state.plan.nodeList.map((n) => [n.name, n.netns]));
  return {
    lab: { runtime: "netns", name: state.plan.prefix },
    access: loadKubeConfig({ kubeconfig: state.kubeconfig }),
    nodeShell: (node) => {
      const ns = netns.get(node);
      return ns ? ["ip", "netns", "exec", ns] : undefined;
    },
  };
}
