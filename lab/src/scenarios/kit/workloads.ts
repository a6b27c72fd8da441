import { type HttpRestClient, isNotFound } from "@switchyard/kube";
import type { Progress } from "@switchyard/testbed/progress";
import type { Deployment } from "kubernetes-types/apps/v1.js";
import type { Pod } from "kubernetes-types/core/v1.js";
import { imageName, loadgenImage } from "../../agent/images.js";
import type { LoadStats } from "../../agent/loadgen-stats.js";
import { loadgenStatsPort } from "../../agent/loadgen-stats.js";
import type { KubeObject } from "../../stack/manifests.js";
import { httpGet, waitUntil } from "../../stack/wait.js";

/** The objects scenarios run: echo servers, pause pods, traffic generators; each in the scenario's namespace. */

export const namespace = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name },
});

export function deployment(ns: string, name: string, replicas: number, image: string): KubeObject {
  const labels = { app: name };
  const echo = imageName(image) === "switchyard/echo";
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          // Pause pods have nothing to drain; echo servers close at once too.
          terminationGracePeriodSeconds: echo ? 5 : 1,
          containers: [
            {
              name,
              image,
              ...(echo ? { readinessProbe: { tcpSocket: { port: 9000 }, periodSeconds: 2 } } : {}),
            },
          ],
        },
      },
    },
  };
}

export const clusterIpService = (ns: string, name: string, app: string, port = 9000): KubeObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: ns },
  spec: { selector: { app }, ports: [{ name: "tcp", port, targetPort: port, protocol: "TCP" }] },
});

/** A traffic generator on every node (agent/loadgen.ts): TCP targets and DNS names, counters on :8080. */
export function loadgenDaemonSet(
  ns: string,
  tcp: string[],
  dns: string[],
  intervalMs = 100,
  name = "loadgen",
  extraArgs: string[] = [],
): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name, namespace: ns },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          tolerations: [{ operator: "Exists" }],
          containers: [
            {
              name: "loadgen",
              image: loadgenImage,
              args: [
                ...tcp.flatMap((t) => ["--tcp", t]),
                ...dns.flatMap((d) => ["--dns", d]),
                ...["--interval-ms", String(intervalMs), "--stats-port", String(loadgenStatsPort)],
                ...extraArgs,
              ],
              readinessProbe: { tcpSocket: { port: loadgenStatsPort }, periodSeconds: 2 },
            },
          ],
        },
      },
    },
  };
}

export async function podsOf(client: HttpRestClient, ns: string, selector: string): Promise<Pod[]> {
  const list = await client.call<{ items: Pod[] }>(
    "GET",
    `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`,
  );
  return list.items;
}

/** Reads one traffic generator's counters. */
export type StatsReader = (pod: Pod) => Promise<LoadStats | undefined>;

/** A generator's counters straight from its pod IP (the netns lab's host reaches every pod). */
export async function statsFromPodIp(pod: Pod): Promise<LoadStats | undefined> {
  const res = await httpGet(`http://${pod.status?.podIP}:${loadgenStatsPort}/`).catch(() => undefined);
  return res?.status === 200 ? (JSON.parse(res.body) as LoadStats) : undefined;
}

/** A generator's counters through the apiserver's pod proxy (a kind lab's host does not reach pod IPs). */
export const statsThroughApiserver =
  (client: HttpRestClient): StatsReader =>
  (pod) =>
    client.call<LoadStats>(
      "GET",
      `/api/v1/namespaces/${pod.metadata?.namespace}/pods/${pod.metadata?.name}:${loadgenStatsPort}/proxy/`,
    );

/**
 * Every traffic generator's counters in `ns` (of the DaemonSet `app`), by node. `read` fetches one pod's; a
 * generator that does not answer (yet) is left out.
 */
export async function loadgenStats(
  client: HttpRestClient,
  ns: string,
  app = "loadgen",
  read: StatsReader = statsFromPodIp,
): Promise<Record<string, LoadStats>> {
  const out: Record<string, LoadStats> = {};
  for (const p of await podsOf(client, ns, `app=${app}`)) {
    const node = p.spec?.nodeName;
    if (!p.status?.podIP || !node) continue;
    const stats = await read(p).catch(() => undefined);
    if (stats) out[node] = stats;
  }
  return out;
}

export async function loadgensRunning(
  client: HttpRestClient,
  ns: string,
  want: number,
  read: StatsReader = statsFromPodIp,
  app = "loadgen",
): Promise<true | string> {
  const running = Object.values(await loadgenStats(client, ns, app, read)).filter((s) => s.rounds > 0).length;
  return running >= want ? true : `${running}/${want} generating`;
}

/** A Deployment fully rolled out: new ReplicaSet everywhere, all Ready, no old or terminating pod left. */
export async function rolledOut(client: HttpRestClient, ns: string, name: string): Promise<true | string> {
  const d = await client.call<Deployment>("GET", `/apis/apps/v1/namespaces/${ns}/deployments/${name}`);
  const want = d.spec?.replicas ?? 1;
  const s = d.status;
  if ((s?.observedGeneration ?? 0) < (d.metadata?.generation ?? 1)) return "not observed yet";
  if ((s?.updatedReplicas ?? 0) < want) return `${s?.updatedReplicas ?? 0}/${want} updated`;
  if ((s?.readyReplicas ?? 0) < want) return `${s?.readyReplicas ?? 0}/${want} ready`;
  const selector = Object.entries(d.spec?.selector.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = await podsOf(client, ns, selector);
  return pods.length === want ? true : `${pods.length} pods (want ${want})`;
}

/** Deletes a namespace and waits until it is gone (its pods stopped, its Services' rules removed after). */
export async function deleteNamespace(
  client: HttpRestClient,
  ns: string,
  deadline: number,
  progress?: Progress,
) {
  await client.call("DELETE", `/api/v1/namespaces/${ns}`).catch((err) => {
    if (!isNotFound(err)) throw err;
  });
  await waitUntil(
    `namespace ${ns} to go`,
    async () => {
      try {
        await client.call("GET", `/api/v1/namespaces/${ns}`);
        return "still terminating";
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    },
    deadline,
    progress,
  );
}

/** Waits until the namespace's default ServiceAccount exists (pods are refused before). */
export async function namespaceReady(client: HttpRestClient, ns: string): Promise<true | string> {
  await client.call("GET", `/api/v1/namespaces/${ns}/serviceaccounts/default`);
  return true;
}
