import { existsSync } from "node:fs";
import { parseApiJson } from "@switchyard/kube";
import { writePrivateFile } from "@switchyard/testbed/private-files";
import type { Node, Pod } from "kubernetes-types/core/v1.js";
import { type Exec, realExec } from "../exec.js";
import { stackLine } from "../stack/manifests.js";
import { apiServerPort } from "./kubeadm-config.js";
import { hostKubeconfig } from "./kubeconfig.js";
import { kindNodeContainers } from "./lab-down.js";
import { kindToolsOnThisMachine } from "./machine-tools.js";
import { kindClusterLabel } from "./node-container.js";
import { readKindState } from "./state.js";
import { kindStatusText } from "./status-text.js";
import type { KindTools } from "./tools.js";

/** The kind lab at a glance: are its node containers there (kind's label), its nodes and pods. */
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
    stackLine(state.stack),
  ];
  const containers = await kindNodeContainers(exec, tools.docker, state.input.name);
  if (containers.length === 0)
    return {
      healthy: false,
      text: [
        ...header,
        "",
        `no node container of cluster ${state.input.name} (docker ps -a --filter label=${kindClusterLabel}=${state.input.name})`,
      ].join("\n"),
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
 * The kubeconfig's path; when the file is gone, it is written again from the control plane's admin.conf and its
 * published port (as `kind get kubeconfig` does), since the cluster keeps its own copy.
 */
export async function kindKubeconfig(
  dir: string,
  o: { tools?: KindTools; exec?: Exec } = {},
): Promise<string> {
  const state = readKindState(dir);
  if (!state) throw new Error(`no kind lab in ${dir}; run switchyard-lab up --runtime kind`);
  if (existsSync(state.kubeconfig)) return state.kubeconfig;
  const tools = o.tools ?? (await kindToolsOnThisMachine(process.stderr));
  const exec = o.exec ?? realExec;
  const node = `${state.input.name}-control-plane`;
  const admin = await exec([tools.docker, "exec", node, "cat", "/etc/kubernetes/admin.conf"]);
  const port = (await exec([tools.docker, "port", node, `${apiServerPort}/tcp`])).trim().split("\n")[0] ?? "";
  const server = `https://${port.replace(/^0\.0\.0\.0:/, "127.0.0.1:")}`;
  writePrivateFile(state.kubeconfig, hostKubeconfig(admin, state.input.name, server));
  return state.kubeconfig;
}
