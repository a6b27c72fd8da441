import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EnvVar, Pod } from "kubernetes-types/core/v1.js";
import type { KubeClient } from "../kubeapi/client.js";
import { nth } from "../netns/ipv4.js";
import type { LabPlan } from "../netns/plan.js";

/** The pod's resolv.conf as the kubelet writes it for its DNS policy. */
export function resolvConf(pod: Pod, plan: LabPlan, hostResolv: string): string {
  const policy = pod.spec?.dnsPolicy ?? "ClusterFirst";
  const hostNetwork = pod.spec?.hostNetwork === true;
  const ns = pod.metadata?.namespace ?? "default";
  const config = pod.spec?.dnsConfig;
  // A hostNetwork pod only gets cluster DNS when it asks for it explicitly.
  const cluster = policy === "ClusterFirstWithHostNet" || (policy === "ClusterFirst" && !hostNetwork);
  if (policy === "Default" || (!cluster && policy !== "None")) return hostResolv;
  const nameservers = cluster ? [plan.dnsIp] : [];
  const searches = cluster ? [`${ns}.svc.cluster.local`, "svc.cluster.local", "cluster.local"] : [];
  const options = cluster ? ["ndots:5"] : [];
  nameservers.push(...(config?.nameservers ?? []));
  searches.push(...(config?.searches ?? []));
  for (const o of config?.options ?? [])
    options.push(o.value === undefined ? (o.name ?? "") : `${o.name}:${o.value}`);
  const lines = nameservers.map((n) => `nameserver ${n}`);
  if (searches.length > 0) lines.push(`search ${searches.join(" ")}`);
  if (options.length > 0) lines.push(`options ${options.join(" ")}`);
  return `${lines.join("\n")}\n`;
}

/** The variables a kubelet gives every container: its own env (with downward-API field refs) and the apiserver's. */
export function containerEnv(pod: Pod, env: readonly EnvVar[], podIp: string, hostIp: string, plan: LabPlan) {
  const apiserver = nth(plan.serviceCidr, 1);
  const out: Record<string, string> = {
    PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    HOSTNAME: pod.spec?.hostNetwork ? (pod.spec.nodeName ?? "") : (pod.metadata?.name ?? ""),
    KUBERNETES_SERVICE_HOST: apiserver,
    KUBERNETES_SERVICE_PORT: "443",
    KUBERNETES_SERVICE_PORT_HTTPS: "443",
    KUBERNETES_PORT: `tcp://${apiserver}:443`,
    KUBERNETES_PORT_443_TCP: `tcp://${apiserver}:443`,
    KUBERNETES_PORT_443_TCP_PROTO: "tcp",
    KUBERNETES_PORT_443_TCP_PORT: "443",
    KUBERNETES_PORT_443_TCP_ADDR: apiserver,
  };
  const fields: Record<string, string> = {
    "metadata.name": pod.metadata?.name ?? "",
    "metadata.namespace": pod.metadata?.namespace ?? "",
    "metadata.uid": pod.metadata?.uid ?? "",
    "spec.nodeName": pod.spec?.nodeName ?? "",
    "spec.serviceAccountName": pod.spec?.serviceAccountName ?? "",
    "status.podIP": podIp,
    "status.hostIP": hostIp,
  };
  for (const e of env) {
    if (e.value !== undefined) out[e.name] = e.value;
    else if (e.valueFrom?.fieldRef) out[e.name] = fields[e.valueFrom.fieldRef.fieldPath] ?? "";
  }
  return out;
}

/**
 * The service-account files at /var/run/secrets/kubernetes.io/serviceaccount: a token bound to this pod from the
 * TokenRequest API, the cluster CA and the namespace. Returns the token's lifetime in seconds.
 */
export async function writeServiceAccount(client: KubeClient, pod: Pod, dir: string, caFile: string) {
  const ns = pod.metadata?.namespace ?? "default";
  const sa = pod.spec?.serviceAccountName ?? "default";
  const expirationSeconds = 3600;
  const response = await client.call<{ status: { token: string } }>(
    "POST",
    `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`,
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: {
        expirationSeconds,
        boundObjectRef: { apiVersion: "v1", kind: "Pod", name: pod.metadata?.name, uid: pod.metadata?.uid },
      },
    },
  );
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "token"), response.status.token, { mode: 0o644 });
  writeFileSync(join(dir, "ca.crt"), readFileSync(caFile));
  writeFileSync(join(dir, "namespace"), ns);
  return expirationSeconds;
}
