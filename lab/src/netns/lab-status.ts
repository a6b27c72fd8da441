import { adminCredentials, isOurs, labClient } from "@switchyard/testbed/controlplane";
import type { Node, Pod } from "kubernetes-types/core/v1.js";
import { type Exec, realExec } from "../exec.js";
import { stackLine } from "../stack/manifests.js";
import { proxyMetricsGet } from "../stack/proxy-measure.js";
import { labPaths, readLabState } from "./state.js";

export interface LabStatus {
  healthy: boolean;
  text: string;
}

/**
 * The lab at a glance: agents alive, nodes Ready with their zone, pod CIDR and the mode their proxy answers now
 * (`migrate` changes it node by node; the stack line keeps the mode `up` deployed), and every pod.
 */
export async function labStatus(dir: string, exec: Exec = realExec): Promise<LabStatus> {
  const state = readLabState(dir);
  if (!state?.server) return { healthy: false, text: `no lab in ${dir}; run switchyard-lab up` };
  const lines = [
    `apiserver:  ${state.server}`,
    `kubeconfig: ${state.kubeconfig}`,
    stackLine(state.stack),
    "",
  ];
  const deadAgents = state.agents.filter((a) => !isOurs(a));
  const client = labClient(adminCredentials(state.server, labPaths(dir).controlPlane));
  try {
    const nodes = await client.call<{ items: Node[] }>("GET", "/api/v1/nodes");
    const pods = await client.call<{ items: Pod[] }>("GET", "/api/v1/pods");
    lines.push("NODE        READY  ZONE     POD CIDR         PROXY     AGENT");
    let allReady = true;
    for (const n of nodes.items) {
      const name = n.metadata?.name ?? "";
      const ready = n.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
      allReady &&= ready;
      const agent = state.agents.find((a) => a.name === `agent-${name}`);
      const alive = agent && isOurs(agent) ? `pid ${agent.pid}` : "not running";
      const zone = n.metadata?.labels?.["topology.kubernetes.io/zone"] ?? "-";
      const netns = state.plan.nodeList.find((p) => p.name === name)?.netns;
      const asked = netns ? proxyMetricsGet(["ip", "netns", "exec", netns], "/proxyMode") : undefined;
      const mode = asked ? (await exec(asked).catch(() => "")).trim() : "";
      lines.push(
        `${name.padEnd(12)}${(ready ? "yes" : "no").padEnd(7)}${zone.padEnd(9)}${podCidrs(n).padEnd(17)} ${(mode || "-").padEnd(10)}${alive}`,
      );
    }
    // The name column is as wide as the longest name, so a long pod name never runs into its phase.
    const names = pods.items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`);
    const width = Math.max(44, ...names.map((n) => n.length)) + 1;
    lines.push("", `${"POD".padEnd(width)}PHASE      READY  IP              NODE`);
    pods.items.forEach((p, i) => {
      const ready = p.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
      lines.push(
        `${(names[i] ?? "").padEnd(width)}${(p.status?.phase ?? "-").padEnd(11)}${(ready ? "yes" : "no").padEnd(7)}${(p.status?.podIP ?? "-").padEnd(16)}${p.spec?.nodeName ?? "-"}`,
      );
    });
    return { healthy: allReady && deadAgents.length === 0, text: lines.join("\n") };
  } catch (err) {
    lines.push(`apiserver unreachable: ${(err as Error).message}`);
    return { healthy: false, text: lines.join("\n") };
  } finally {
    client.close();
  }
}

/** A node's pod CIDRs, one per family (a dual-stack node has two), or "-" before the controller-manager gave any. */
function podCidrs(n: Node): string {
  return (n.spec?.podCIDRs?.length ? n.spec.podCIDRs : n.spec?.podCIDR ? [n.spec.podCIDR] : ["-"]).join(",");
}
