import type { HttpRestClient } from "@switchyard/kube";
import type { Progress } from "@switchyard/testbed/progress";
import type { DaemonSet } from "kubernetes-types/apps/v1.js";
import type { Exec } from "../exec.js";
import { applyObjects } from "./apply.js";
import type { KubeObject, ProxyMode } from "./manifests.js";
import { withMode } from "./manifests.js";
import { type NodeShell, proxyView } from "./proxy-measure.js";
import { waitUntil } from "./wait.js";

/**
 * Per-node proxy modes, the way operators roll a kube-proxy change out node by node: kube-proxy has one
 * ConfigMap for its DaemonSet, and upstream kube-proxy exits when its config file changes (the kubelet refreshes
 * a ConfigMap volume within about a minute), so editing that ConfigMap moves every node at once, uncontrolled.
 * Instead, a node labelled `switchyard.dev/kube-proxy-mode=<mode>` runs the pod of a second DaemonSet
 * `kube-proxy-<mode>` with its own ConfigMap, and the original DaemonSet keeps away from labelled nodes.
 * Labelling a node is the switch; removing the label is the rollback.
 */
export const modeLabel = "switchyard.dev/kube-proxy-mode";

const meta = (obj: KubeObject, name: string): KubeObject["metadata"] => ({
  name,
  namespace: obj.metadata.namespace ?? "kube-system",
  labels: { ...(obj.metadata.labels ?? {}), [modeLabel]: "true" },
});

/** The original DaemonSet, kept off nodes that carry the label (applied once; its pods roll in place). */
export function withoutLabelledNodes(ds: KubeObject): KubeObject {
  const out = structuredClone(ds);
  const podSpec = (out.spec as { template: { spec: Record<string, unknown> } }).template.spec;
  podSpec.affinity = {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: modeLabel, operator: "DoesNotExist" }] }],
      },
    },
  };
  return out;
}

/** The ConfigMap of the mode's DaemonSet: the original with another mode line. */
export function modeConfigMap(cm: KubeObject, mode: ProxyMode): KubeObject {
  const data = { ...(cm.data as Record<string, string>) };
  data["config.conf"] = withMode(data["config.conf"] ?? "", mode);
  return { apiVersion: "v1", kind: "ConfigMap", metadata: meta(cm, `kube-proxy-${mode}`), data };
}

/** The mode's DaemonSet: the original's pod template, its own selector and ConfigMap, only on labelled nodes. */
export function modeDaemonSet(ds: KubeObject, mode: ProxyMode): KubeObject {
  const name = `kube-proxy-${mode}`;
  const spec = structuredClone(ds.spec) as {
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
  };
  spec.selector = { matchLabels: { "k8s-app": name } };
  spec.template.metadata.labels = { ...spec.template.metadata.labels, "k8s-app": name };
  const podSpec = spec.template.spec;
  podSpec.nodeSelector = { ...((podSpec.nodeSelector as Record<string, string>) ?? {}), [modeLabel]: mode };
  const volumes = (podSpec.volumes as Array<{ configMap?: { name: string } }>) ?? [];
  for (const v of volumes) if (v.configMap?.name === "kube-proxy") v.configMap.name = name;
  return { apiVersion: "apps/v1", kind: "DaemonSet", metadata: meta(ds, name), spec };
}

/**
 * The live DaemonSet already keeps off labelled nodes and has every volume of the lab's (a lab whose proxy got its
 * ebpf places later is prepared again, so that no mode's pod lacks them).
 */
function isPrepared(live: DaemonSet, ds: KubeObject): boolean {
  const terms =
    live.spec?.template.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
      ?.nodeSelectorTerms ?? [];
  const affinity = terms.some((t) => t.matchExpressions?.some((e) => e.key === modeLabel));
  const want = (ds.spec as DaemonSet["spec"])?.template.spec?.volumes ?? [];
  const have = new Set((live.spec?.template.spec?.volumes ?? []).map((v) => v.name));
  return affinity && want.every((v) => have.has(v.name));
}

/**
 * Once per lab: the original DaemonSet learns to keep off labelled nodes. Its pods roll in place in the same mode
 * (rules stay, the new pod resyncs them); the time is reported apart from the switches.
 */
export async function prepare(
  client: HttpRestClient,
  ds: KubeObject,
  nodes: readonly { name: string; run: NodeShell }[],
  exec: Exec,
  deadline: number,
  progress: Progress,
) {
  const live = await client.call<DaemonSet>(
    "GET",
    "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy",
  );
  if (isPrepared(live, ds)) return undefined;
  const started = Date.now();
  progress.update(
    "preparing: the kube-proxy DaemonSet keeps off nodes labelled for another mode (rolls in place)",
    true,
  );
  await applyObjects(client, [withoutLabelledNodes(ds)]);
  await waitUntil(
    "the kube-proxy DaemonSet to roll",
    async () => {
      const d = await client.call<DaemonSet>(
        "GET",
        "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy",
      );
      const s = d.status;
      const done =
        (s?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
        s?.updatedNumberScheduled === s?.desiredNumberScheduled &&
        s?.numberReady === s?.desiredNumberScheduled;
      return done ? true : `${s?.updatedNumberScheduled ?? 0}/${s?.desiredNumberScheduled ?? 0} updated`;
    },
    deadline,
    progress,
  );
  for (const n of nodes)
    await waitUntil(
      `${n.name}'s proxy to sync`,
      async () => ((await proxyView(exec, n.run)).sync.count > 0 ? true : "no sync yet"),
      deadline,
      progress,
    );
  return (Date.now() - started) / 1000;
}
