import { type HttpRestClient, realClock, sleep } from "@switchyard/kube";
import type { Progress } from "@switchyard/testbed/progress";
import type { Pod } from "kubernetes-types/core/v1.js";
import type { Exec } from "../../exec.js";
import { proxyMetricsGet } from "../../stack/proxy-measure.js";
import { waitUntil } from "../../stack/wait.js";
import { histogram, syncHistogram } from "./prom.js";
import type { LabNode } from "./scenario-lab.js";

/** The proxy DaemonSets a node's proxy pod may belong to: the original and migrate's per-mode ones. */
const proxyApps = ["kube-proxy", "kube-proxy-iptables", "kube-proxy-nftables"];

/** The proxy pods bound to a node (more than one while one is being replaced). */
export async function proxyPodsOn(client: HttpRestClient, node: string): Promise<Pod[]> {
  const pods = await client.call<{ items: Pod[] }>(
    "GET",
    `/api/v1/namespaces/kube-system/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}`,
  );
  return pods.items.filter((p) => proxyApps.includes(p.metadata?.labels?.["k8s-app"] ?? ""));
}

/** The node proxy's /metrics from its loopback address ("" when nothing listens), as an operator curls it. */
export const proxyMetrics = (exec: Exec, at: readonly string[]) =>
  exec(proxyMetricsGet(at, "/metrics")).catch(() => "");

export const proxyMode = async (exec: Exec, at: readonly string[]) =>
  (await exec(proxyMetricsGet(at, "/proxyMode")).catch(() => "")).trim();

export async function syncCount(exec: Exec, at: readonly string[]): Promise<number> {
  return histogram(await proxyMetrics(exec, at), syncHistogram).count;
}

/** The ConfigMap a proxy pod reads its KubeProxyConfiguration from. */
export function proxyConfigMapOf(pod: Pod): string {
  const v = pod.spec?.volumes?.find((x) => x.configMap?.name?.startsWith("kube-proxy"));
  if (!v?.configMap?.name) throw new Error(`proxy pod ${pod.metadata?.name} mounts no kube-proxy ConfigMap`);
  return v.configMap.name;
}

/** One proxy pod on the node, not `oldUid`, running, serving metrics, past its first sync. */
export async function waitProxySynced(
  client: HttpRestClient,
  exec: Exec,
  node: LabNode,
  deadline: number,
  progress?: Progress,
  oldUid?: string,
): Promise<Pod> {
  let pod: Pod | undefined;
  await waitUntil(
    `${node.name}'s proxy to sync`,
    async () => {
      const pods = await proxyPodsOn(client, node.name);
      if (pods.length !== 1) return `${pods.length} proxy pods on the node`;
      pod = pods[0];
      if (pod?.metadata?.uid === oldUid) return "the old proxy pod is still there";
      if (pod?.status?.phase !== "Running") return `proxy pod ${pod?.status?.phase ?? "pending"}`;
      return (await syncCount(exec, node.run)) > 0 ? true : "no sync yet";
    },
    deadline,
    progress,
  );
  if (!pod) throw new Error("unreachable");
  return pod;
}

/**
 * Waits until the node's proxy has not synced for `quietMs` (its changes are written), returns its sync count.
 * The proxy syncs at least every syncPeriod (30 s), so quietMs stays well below that.
 */
export async function waitProxyQuiet(
  exec: Exec,
  node: LabNode,
  quietMs: number,
  deadline: number,
): Promise<number> {
  let last = await syncCount(exec, node.run);
  let since = Date.now();
  for (;;) {
    await sleep(realClock, 250);
    const now = await syncCount(exec, node.run);
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return now;
    if (Date.now() > deadline) throw new Error(`${node.name}'s proxy never stopped syncing`);
  }
}
