import { existsSync, writeFileSync } from "node:fs";
import { parseApiJson } from "@switchyard/kube";
import type { Node, Pod } from "kubernetes-types/core/v1.js";
import { type Exec, realExec } from "../netns/exec.js";
import { kindToolsOnThisMachine } from "./machine-tools.js";
import { readKindState } from "./state.js";
import { kindStatusText } from "./status-text.js";
import type { KindTools } from "./tools.js";

/** The kind lab at a glance: is the cluster there (`kind get clusters`), its nodes and pods. */
export async function kindStatus(
  dir: string,
  o: { tools?: KindTools; exec?: Exec } = {},
): Promise<{ healthy: boolean; text: string }> {
  const state = readKindState(dir);
  if (!state) return { healthy: false, text: `no kind lab in ${dir}` };
  const tools = o.tools ?? (await kindToolsOnThisMachine(process.stderr));
  const exec = o.exec ?? realExec;
  const header = [
    `runtime:    kind (cluster ${state.input.name}, node image ${state.input.nodeImage})`,
    `apiserver:  ${state.server || "-"}`,
    `kubeconfig: ${state.kubeconfig}`,
  ];
  const clusters = (await exec([tools.kind, "get", "clusters"])).split("\n").map((l) => l.trim());
  if (!clusters.includes(state.input.name))
    return {
      healthy: false,
      text: [...header, "", `kind has no cluster ${state.input.name} (kind get clusters)`].join("\n"),
    };
  const kubectl = [tools.kubectl, "--kubeconfig", state.kubeconfig];
  try {
    const nodes = parseApiJson(await exec([...kubectl, "get", "nodes", "-o", "json"])) as { items: Node[] };
    const pods = parseApiJson(await exec([...kubectl, "get", "pods", "-A", "-o", "json"])) as {
      items: Pod[];
    };
    return kindStatusText(header, nodes.items, pods.items);
  } catch (err) {
    return {
      healthy: false,
      text: [...header, "", `apiserver unreachable: ${(err as Error).message}`].join("\n"),
    };
  }
}

/**
 * The kubeconfig's path; when the file is gone, kind writes it again (`kind get kubeconfig`), as the cluster
 * keeps its own copy.
 */
export async function kindKubeconfig(
  dir: string,
  o: { tools?: KindTools; exec?: Exec } = {},
): Promise<string> {
  const state = readKindState(dir);
  if (!state) throw new Error(`no kind lab in ${dir}; run switchyard-lab up --runtime kind`);
  if (existsSync(state.kubeconfig)) return state.kubeconfig;
  const tools = o.tools ?? (await kindToolsOnThisMachine(process.stderr));
  const text = await (o.exec ?? realExec)([tools.kind, "get", "kubeconfig", "--name", state.input.name]);
  writeFileSync(state.kubeconfig, text);
  return state.kubeconfig;
}
