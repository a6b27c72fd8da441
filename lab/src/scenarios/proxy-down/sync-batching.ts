import { isNotFound, patchContentTypes } from "@switchyard/kube";
import type { ConfigMap } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { applyObjects } from "../../stack/apply.js";
import { waitUntil } from "../../stack/wait.js";
import {
  proxyConfigMapOf,
  proxyMetrics,
  proxyPodsOn,
  waitProxyQuiet,
  waitProxySynced,
} from "../kit/node-proxy.js";
import { histogram, metricSum, syncHistogram } from "../kit/prom.js";
import type { LabNode, ScenarioLab } from "../kit/scenario-lab.js";
import type { Undo } from "../kit/undo.js";
import { clusterIpService, deployment, podsOf, rolledOut } from "../kit/workloads.js";

/** C15: how many times one node's proxy rewrote its rules while a Deployment of Ready pods was deleted. */
export interface BatchRun {
  minSyncPeriod: string;
  pods: number;
  /** Syncs (kubeproxy_sync_proxy_rules_duration_seconds count) from the delete until the rules were quiet. */
  syncs: number;
  /** Endpoint changes the proxy saw meanwhile (sync_proxy_rules_endpoint_changes_total). */
  endpointChanges: number;
  seconds: number;
}

/** Sets every `minSyncPeriod:` line of a KubeProxyConfiguration (the iptables and nftables sections). */
export function withMinSyncPeriod(configConf: string, period: string): string {
  if (!/^\d+(ms|s|m)$/.test(period)) throw new Error(`scenario: "${period}" is not a duration like 0s or 1s`);
  const line = /^(\s+minSyncPeriod:) .*$/gm;
  if (!line.test(configConf)) throw new Error("kube-proxy ConfigMap: config.conf has no minSyncPeriod line");
  return configConf.replace(line, `$1 ${period}`);
}

/** Restarts the node's proxy so it reads its (edited) ConfigMap, as upstream kube-proxy must be. */
async function restartProxy(lab: ScenarioLab, node: LabNode) {
  const [pod] = await proxyPodsOn(lab.client, node.name);
  if (pod) await lab.client.call("DELETE", `/api/v1/namespaces/kube-system/pods/${pod.metadata?.name}`);
  return waitProxySynced(lab.client, lab.exec, node, lab.deadline(), lab.progress, pod?.metadata?.uid);
}

export async function measureBatching(
  lab: ScenarioLab,
  node: LabNode,
  ns: string,
  periods: readonly string[],
  pods: number,
  undo: Undo,
): Promise<BatchRun[]> {
  const [pod] = await proxyPodsOn(lab.client, node.name);
  if (!pod) throw new Error(`${node.name} runs no proxy`);
  const cmPath = `/api/v1/namespaces/kube-system/configmaps/${proxyConfigMapOf(pod)}`;
  const original = (await lab.client.call<ConfigMap>("GET", cmPath)).data?.["config.conf"] ?? "";
  for (const p of periods) withMinSyncPeriod(original, p);
  undo.push(
    `${proxyConfigMapOf(pod)}'s minSyncPeriod, and ${node.name}'s proxy restarted with it`,
    async () => {
      await lab.client.call("PATCH", cmPath, { data: { "config.conf": original } }, patchContentTypes.merge);
      await restartProxy(lab, node);
    },
  );
  const runs: BatchRun[] = [];
  for (const period of periods) {
    lab.progress.update(`minSyncPeriod ${period}: restarting ${node.name}'s proxy with it`, true);
    await lab.client.call(
      "PATCH",
      cmPath,
      { data: { "config.conf": withMinSyncPeriod(original, period) } },
      patchContentTypes.merge,
    );
    await restartProxy(lab, node);
    const name = `batch-${period.replace(/\W/g, "")}`;
    lab.progress.update(`minSyncPeriod ${period}: ${pods} pause pods behind Service ${name}`, true);
    await applyObjects(lab.client, [
      deployment(ns, name, pods, lab.images.pause),
      clusterIpService(ns, name, name, 80),
    ]);
    await waitUntil(
      `${pods} Ready pods`,
      () => rolledOut(lab.client, ns, name),
      lab.deadline(600_000),
      lab.progress,
    );
    await waitUntil(
      `${pods} ready endpoints`,
      () => readyEndpoints(lab, ns, name, pods),
      lab.deadline(),
      lab.progress,
    );
    await waitProxyQuiet(lab.exec, node, 3000, lab.deadline());
    const before = await proxyMetrics(lab.exec, node.run);
    const t0 = Date.now();
    lab.progress.update(`minSyncPeriod ${period}: deleting the Deployment`, true);
    await lab.client.call("DELETE", `/apis/apps/v1/namespaces/${ns}/deployments/${name}`, {
      propagationPolicy: "Background",
    });
    await waitUntil(
      "the pods to go",
      async () => {
        const left = (await podsOf(lab.client, ns, `app=${name}`)).length;
        return left === 0 ? true : `${left} left`;
      },
      lab.deadline(600_000),
      lab.progress,
    );
    await waitUntil(
      "the slices to empty",
      () => readyEndpoints(lab, ns, name, 0, true),
      lab.deadline(),
      lab.progress,
    );
    await waitProxyQuiet(lab.exec, node, 3000, lab.deadline());
    const after = await proxyMetrics(lab.exec, node.run);
    runs.push({
      minSyncPeriod: period,
      pods,
      syncs: histogram(after, syncHistogram).count - histogram(before, syncHistogram).count,
      endpointChanges:
        metricSum(after, "kubeproxy_sync_proxy_rules_endpoint_changes_total") -
        metricSum(before, "kubeproxy_sync_proxy_rules_endpoint_changes_total"),
      seconds: (Date.now() - t0) / 1000,
    });
    await lab.client.call("DELETE", `/api/v1/namespaces/${ns}/services/${name}`).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
  }
  return runs;
}

async function readyEndpoints(
  lab: ScenarioLab,
  ns: string,
  svc: string,
  want: number,
  anyEndpoint = false,
): Promise<true | string> {
  const list = await lab.client.call<{ items: EndpointSlice[] }>(
    "GET",
    `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${svc}`)}`,
  );
  const eps = list.items.flatMap((s) => s.endpoints ?? []);
  const n = anyEndpoint ? eps.length : eps.filter((e) => e.conditions?.ready !== false).length;
  return n === want ? true : `${n} endpoints (want ${want})`;
}
