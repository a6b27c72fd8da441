import type { KubeObject, ProxyMode } from "../stack/manifests.js";
import { withMode } from "../stack/manifests.js";

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
