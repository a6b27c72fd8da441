import yaml from "js-yaml";

/** The apiserver URL of a kubeconfig's current context (kind writes one cluster, on a loopback port). */
export function kubeconfigServer(text: string): string {
  const cfg = yaml.load(text) as {
    "current-context"?: string;
    contexts?: { name: string; context: { cluster: string } }[];
    clusters?: { name: string; cluster: { server: string } }[];
  } | null;
  const context = cfg?.contexts?.find((c) => c.name === cfg["current-context"]) ?? cfg?.contexts?.[0];
  const cluster = cfg?.clusters?.find((c) => c.name === context?.context.cluster) ?? cfg?.clusters?.[0];
  if (!cluster?.cluster.server) throw new Error("the kubeconfig kind wrote names no apiserver");
  return cluster.cluster.server;
}
