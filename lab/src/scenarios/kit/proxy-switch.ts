import { isNotFound, patchContentTypes } from "@switchyard/kube";
import type { ConfigMap, Node, Pod } from "kubernetes-types/core/v1.js";
import { repoRoot } from "../../self.js";
import { applyObjects } from "../../stack/apply.js";
import { modeConfigMap, modeDaemonSet, modeLabel, prepare } from "../../stack/canary.js";
import { configMode, type KubeObject, labProxyDaemonSet, type ProxyMode } from "../../stack/manifests.js";
import { waitUntil } from "../../stack/wait.js";
import { proxyMode, proxyPodsOn, waitProxySynced } from "./node-proxy.js";
import type { LabNode, ScenarioLab } from "./scenario-lab.js";
import type { Undo } from "./undo.js";

/**
 * A node's proxy, switched the way migrate does it (stack/canary.ts): the original DaemonSet keeps off nodes
 * labelled `switchyard.dev/kube-proxy-mode`, and the label's value picks the per-mode DaemonSet. A value no
 * DaemonSet selects (`off`) is how an operator keeps a node's proxy away: the DaemonSet controller deletes the
 * pod, and nothing recreates it until the label goes.
 */
export const offValue = "off";

/** Adds migrate's affinity to the original DaemonSet when it is missing (all proxies roll in place then). */
export async function ensureLabelSwitch(lab: ScenarioLab, undo: Undo): Promise<void> {
  const ds = labProxyDaemonSet(repoRoot, lab.ebpf);
  const nodes = lab.nodes.map((n) => ({ ...n, runsPods: true }));
  const seconds = await prepare(lab.client, ds, nodes, lab.exec, lab.deadline(), lab.progress);
  if (seconds === undefined) return;
  undo.push("the kube-proxy DaemonSet without the per-node switch (rolls in place)", async () => {
    await applyObjects(lab.client, [ds]);
    for (const n of lab.nodes) await waitProxySynced(lab.client, lab.exec, n, lab.deadline());
  });
}

export async function nodeLabel(lab: ScenarioLab, node: string): Promise<string | null> {
  const n = await lab.client.call<Node>("GET", `/api/v1/nodes/${node}`);
  return n.metadata?.labels?.[modeLabel] ?? null;
}

export async function setNodeLabel(lab: ScenarioLab, node: string, value: string | null): Promise<void> {
  await lab.client.call(
    "PATCH",
    `/api/v1/nodes/${node}`,
    { metadata: { labels: { [modeLabel]: value } } },
    patchContentTypes.merge,
  );
}

/** Stops the node's proxy (label `off`); its pod is deleted and not recreated. The label comes back on undo. */
export async function stopProxy(lab: ScenarioLab, node: LabNode, undo: Undo): Promise<void> {
  await ensureLabelSwitch(lab, undo);
  const before = await nodeLabel(lab, node.name);
  undo.push(`${node.name}'s proxy label (${before ?? "none"})`, () => setNodeLabel(lab, node.name, before));
  await setNodeLabel(lab, node.name, offValue);
  await waitUntil(
    `${node.name}'s proxy to stop`,
    async () => {
      const pods = await proxyPodsOn(lab.client, node.name);
      if (pods.length > 0) return `${pods.length} proxy pod(s) still there`;
      return (await proxyMode(lab.exec, node.run)) === "" ? true : "still serving metrics";
    },
    lab.deadline(),
    lab.progress,
  );
}

/** The mode every node runs unless labelled: the original ConfigMap's. */
async function defaultMode(lab: ScenarioLab): Promise<{ mode: string; cm: ConfigMap }> {
  const cm = await lab.client.call<ConfigMap>("GET", "/api/v1/namespaces/kube-system/configmaps/kube-proxy");
  return { mode: configMode(cm.data?.["config.conf"] ?? ""), cm };
}

/**
 * Puts the node's proxy in `mode` with a fresh process (a restart when it already runs that mode), returns the
 * new pod. The per-mode DaemonSet and ConfigMap are created when missing and deleted on undo.
 */
export async function freshProxyIn(
  lab: ScenarioLab,
  node: LabNode,
  mode: ProxyMode,
  undo: Undo,
): Promise<Pod> {
  await ensureLabelSwitch(lab, undo);
  const [old] = await proxyPodsOn(lab.client, node.name);
  const current = await nodeLabel(lab, node.name);
  const { mode: dflt, cm } = await defaultMode(lab);
  const want = mode === dflt ? null : mode;
  if (want !== null) await ensureModeDaemonSet(lab, mode, cm, undo);
  if (current === want && old) {
    await lab.client.call("DELETE", `/api/v1/namespaces/kube-system/pods/${old.metadata?.name}`);
  } else {
    await setNodeLabel(lab, node.name, want);
  }
  return waitProxySynced(
    lab.client,
    lab.exec,
    node,
    lab.deadline(20 * 60_000),
    lab.progress,
    old?.metadata?.uid,
  );
}

async function ensureModeDaemonSet(lab: ScenarioLab, mode: ProxyMode, cm: ConfigMap, undo: Undo) {
  const name = `kube-proxy-${mode}`;
  try {
    await lab.client.call("GET", `/apis/apps/v1/namespaces/kube-system/daemonsets/${name}`);
    return;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const cmObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "kube-proxy", namespace: "kube-system" },
    data: cm.data,
  };
  await applyObjects(lab.client, [
    modeConfigMap(cmObject as KubeObject, mode),
    modeDaemonSet(labProxyDaemonSet(repoRoot, lab.ebpf), mode),
  ]);
  undo.push(`the ${name} DaemonSet and ConfigMap`, async () => {
    for (const path of [
      `/apis/apps/v1/namespaces/kube-system/daemonsets/${name}`,
      `/api/v1/namespaces/kube-system/configmaps/${name}`,
    ])
      await lab.client.call("DELETE", path).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
  });
}
