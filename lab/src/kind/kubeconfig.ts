import type { ClientCertificate } from "@switchyard/kube";
import yaml from "js-yaml";

/** The apiserver URL of a kubeconfig's current context (a kind lab's has one cluster, on a loopback port). */
export function kubeconfigServer(text: string): string {
  const cfg = yaml.load(text) as {
    "current-context"?: string;
    contexts?: { name: string; context: { cluster: string } }[];
    clusters?: { name: string; cluster: { server: string } }[];
  } | null;
  const context = cfg?.contexts?.find((c) => c.name === cfg["current-context"]) ?? cfg?.contexts?.[0];
  const cluster = cfg?.clusters?.find((c) => c.name === context?.context.cluster) ?? cfg?.clusters?.[0];
  if (!cluster?.cluster.server) throw new Error("the kind lab's kubeconfig names no apiserver");
  return cluster.cluster.server;
}

interface KindKubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: { name: string; cluster: { "certificate-authority-data"?: string } }[];
  users?: { name: string; user: { "client-certificate-data"?: string; "client-key-data"?: string } }[];
}

/** The lab client's identity from a kind lab's kubeconfig: its CA and client certificate are inline. */
export function kindCredentials(text: string, server: string): ClientCertificate {
  const cfg = yaml.load(text) as KindKubeconfig | null;
  const context = cfg?.contexts?.find((c) => c.name === cfg["current-context"]) ?? cfg?.contexts?.[0];
  const cluster = cfg?.clusters?.find((c) => c.name === context?.context.cluster)?.cluster;
  const user = cfg?.users?.find((u) => u.name === context?.context.user)?.user;
  const ca = cluster?.["certificate-authority-data"];
  const cert = user?.["client-certificate-data"];
  const key = user?.["client-key-data"];
  if (!ca || !cert || !key)
    throw new Error(
      "the kind lab's kubeconfig has no inline CA, client certificate and key for its current context",
    );
  const data = (b64: string) => Buffer.from(b64, "base64");
  return { server, ca: data(ca), cert: data(cert), key: data(key) };
}

/**
 * The host's kubeconfig from the control plane's admin.conf, as `kind export kubeconfig` writes it: cluster, user
 * and context named `kind-<cluster>`, the server the apiserver's published loopback address.
 */
export function hostKubeconfig(adminConf: string, cluster: string, server: string): string {
  const cfg = yaml.load(adminConf) as KindKubeconfig | null;
  const context = cfg?.contexts?.find((c) => c.name === cfg["current-context"]) ?? cfg?.contexts?.[0];
  const c = cfg?.clusters?.find((x) => x.name === context?.context.cluster)?.cluster;
  const u = cfg?.users?.find((x) => x.name === context?.context.user)?.user;
  if (!c || !u) throw new Error("the control plane's admin.conf names no cluster and user for its context");
  const name = `kind-${cluster}`;
  return yaml.dump({
    apiVersion: "v1",
    kind: "Config",
    "current-context": name,
    clusters: [{ name, cluster: { ...c, server } }],
    users: [{ name, user: u }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    preferences: {},
  });
}
