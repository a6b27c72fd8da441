import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hostPort, parseMilliQuantity, parseQuantity } from "@switchyard/basics";
import type { HttpRestClient } from "@switchyard/kube";
import { firstServiceIp } from "@switchyard/testbed/controlplane";
import { writePrivateFile } from "@switchyard/testbed/private-files";
import type { EnvVar, Pod, ResourceFieldSelector } from "kubernetes-types/core/v1.js";
import { containerPathDirs } from "./container-path.js";
import type { LabPlan } from "./host/netns.js";
import { nodeCapacity } from "./node-object.js";
import { applyAccess, tokenAccess, volumeOwners } from "./volume-ownership.js";

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

/**
 * The pod's hostname and domain as the kubelet makes them (GeneratePodHostNameAndDomain): `hostnameOverride`, else
 * `hostname`, else the pod's name, cut to 63 characters without a trailing dash or dot; the domain only with a
 * `subdomain` (and no override): `<subdomain>.<namespace>.svc.<cluster domain>`.
 */
export function podHostname(pod: Pod, clusterDomain = "cluster.local"): { hostname: string; domain: string } {
  const override = (pod.spec as { hostnameOverride?: string } | undefined)?.hostnameOverride;
  const wanted = override ?? (pod.spec?.hostname || (pod.metadata?.name ?? ""));
  const hostname = wanted.length > 63 ? wanted.slice(0, 63).replace(/[-.]+$/, "") : wanted;
  const subdomain = override === undefined ? pod.spec?.subdomain : undefined;
  const domain = subdomain ? `${subdomain}.${pod.metadata?.namespace ?? "default"}.svc.${clusterDomain}` : "";
  return { hostname, domain };
}

/**
 * The pod's /etc/hosts as the kubelet writes it: for a pod network the managed file (localhost lines, then each
 * pod IP with the FQDN and hostname, then hostAliases); for hostNetwork the node's own file under a header.
 */
export function etcHosts(pod: Pod, podIps: readonly string[], nodeHosts: string): string {
  const aliases = pod.spec?.hostAliases ?? [];
  const aliasLines =
    aliases.length === 0
      ? ""
      : `\n# Entries added by HostAliases.\n${aliases.map((a) => `${a.ip}\t${(a.hostnames ?? []).join("\t")}\n`).join("")}`;
  if (pod.spec?.hostNetwork)
    return `# Kubernetes-managed hosts file (host network).\n${nodeHosts}${aliasLines}`;
  const { hostname, domain } = podHostname(pod);
  const names = domain ? `${hostname}.${domain}\t${hostname}` : hostname;
  return [
    "# Kubernetes-managed hosts file.\n",
    "127.0.0.1\tlocalhost\n",
    "::1\tlocalhost ip6-localhost ip6-loopback\n",
    "fe00::0\tip6-localnet\n",
    "fe00::0\tip6-mcastprefix\n",
    "fe00::1\tip6-allnodes\n",
    "fe00::2\tip6-allrouters\n",
    ...podIps.map((ip) => `${ip}\t${names}\n`),
    aliasLines,
  ].join("");
}

/** The variables a kubelet gives every container: its own env (with downward-API field refs) and the apiserver's. */
export function containerEnv(
  pod: Pod,
  env: readonly EnvVar[],
  ips: { pod: readonly string[]; host: readonly string[] },
  plan: LabPlan,
  containerName = "",
) {
  const apiserver = firstServiceIp(plan.serviceCidr);
  const out: Record<string, string> = {
    PATH: containerPathDirs.join(":"),
    HOSTNAME: pod.spec?.hostNetwork ? (pod.spec.nodeName ?? "") : podHostname(pod).hostname,
    KUBERNETES_SERVICE_HOST: apiserver,
    KUBERNETES_SERVICE_PORT: "443",
    KUBERNETES_SERVICE_PORT_HTTPS: "443",
    KUBERNETES_PORT: `tcp://${hostPort(apiserver, 443)}`,
    KUBERNETES_PORT_443_TCP: `tcp://${hostPort(apiserver, 443)}`,
    KUBERNETES_PORT_443_TCP_PROTO: "tcp",
    KUBERNETES_PORT_443_TCP_PORT: "443",
    KUBERNETES_PORT_443_TCP_ADDR: apiserver,
  };
  for (const e of env) {
    if (e.value !== undefined) out[e.name] = e.value;
    else if (e.valueFrom?.fieldRef) out[e.name] = fieldValue(pod, e.valueFrom.fieldRef.fieldPath, ips);
    else if (e.valueFrom?.resourceFieldRef)
      out[e.name] = resourceFieldValue(pod, e.valueFrom.resourceFieldRef, containerName);
  }
  return out;
}

/**
 * A downward-API field as the kubelet resolves it for env: the pod's own fields, the IP lists comma-joined, a
 * label or annotation by key, or all of them as `key="value"` lines sorted by key.
 */
export function fieldValue(
  pod: Pod,
  path: string,
  ips: { pod: readonly string[]; host: readonly string[] },
): string {
  const m = pod.metadata;
  const fields: Record<string, string> = {
    "metadata.name": m?.name ?? "",
    "metadata.namespace": m?.namespace ?? "",
    "metadata.uid": m?.uid ?? "",
    "spec.nodeName": pod.spec?.nodeName ?? "",
    "spec.serviceAccountName": pod.spec?.serviceAccountName ?? "",
    "status.podIP": ips.pod[0] ?? "",
    "status.podIPs": ips.pod.join(","),
    "status.hostIP": ips.host[0] ?? "",
    "status.hostIPs": ips.host.join(","),
  };
  if (path in fields) return fields[path] ?? "";
  const indexed = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (indexed) return (indexed[1] === "labels" ? m?.labels : m?.annotations)?.[indexed[2] ?? ""] ?? "";
  if (path === "metadata.labels" || path === "metadata.annotations") {
    const map = (path === "metadata.labels" ? m?.labels : m?.annotations) ?? {};
    return Object.keys(map)
      .sort()
      .map((k) => `${k}=${JSON.stringify(map[k])}`)
      .join("\n");
  }
  return "";
}

/**
 * A container's resource as the downward API gives it (ExtractResourceValueByContainerNameAndNodeAllocatable): a
 * limit the container does not set is the node's allocatable; a request it does not set is 0; the value divided
 * by the divisor (1 by default), rounded up, CPU in millicores before dividing. `self` names the container when
 * the selector does not (env); "" for a resource the downward API does not know.
 */
export function resourceFieldValue(pod: Pod, ref: ResourceFieldSelector, self: string): string {
  const name = ref.containerName || self;
  const c = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
    (x) => x.name === name,
  );
  const match = /^(limits|requests)\.(cpu|memory|ephemeral-storage)$/.exec(ref.resource);
  if (!c || !match) return "";
  const [, kind = "", resource = ""] = match;
  const own = (kind === "limits" ? c.resources?.limits : c.resources?.requests)?.[resource];
  const fallback = kind === "limits" ? nodeCapacity[resource as keyof typeof nodeCapacity] : "0";
  const value = own ?? fallback;
  const divisor = ref.divisor && ref.divisor !== "0" ? String(ref.divisor) : "1";
  if (resource === "cpu")
    return String(Math.ceil((parseMilliQuantity(String(value)) ?? 0) / (parseMilliQuantity(divisor) ?? 1)));
  return String(Math.ceil((parseQuantity(String(value)) ?? 0) / (parseQuantity(divisor) ?? 1)));
}

/** A token for the pod's ServiceAccount from the TokenRequest API, bound to the pod (for an audience, if given). */
export async function requestPodToken(
  client: HttpRestClient,
  pod: Pod,
  expirationSeconds: number,
  audience?: string,
): Promise<string> {
  const ns = pod.metadata?.namespace ?? "default";
  const sa = pod.spec?.serviceAccountName ?? "default";
  const response = await client.call<{ status: { token: string } }>(
    "POST",
    `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`,
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: {
        ...(audience ? { audiences: [audience] } : {}),
        expirationSeconds,
        boundObjectRef: { apiVersion: "v1", kind: "Pod", name: pod.metadata?.name, uid: pod.metadata?.uid },
      },
    },
  );
  return response.status.token;
}

/**
 * The service-account files at /var/run/secrets/kubernetes.io/serviceaccount: a token bound to this pod from the
 * TokenRequest API, the cluster CA and the namespace. Returns the token's lifetime in seconds.
 */
export async function writeServiceAccount(client: HttpRestClient, pod: Pod, dir: string, caFile: string) {
  const ns = pod.metadata?.namespace ?? "default";
  const expirationSeconds = 3600;
  const token = await requestPodToken(client, pod, expirationSeconds);
  mkdirSync(dir, { recursive: true });
  // The kube-api-access volume's mode is 0644; who may read the token follows the pod's users (volume-ownership.ts).
  const access = tokenAccess(volumeOwners(pod), 0o644);
  writePrivateFile(join(dir, "token"), token);
  applyAccess(join(dir, "token"), access);
  writeFileSync(join(dir, "ca.crt"), readFileSync(caFile));
  writeFileSync(join(dir, "namespace"), ns);
  return expirationSeconds;
}
