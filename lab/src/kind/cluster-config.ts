import yaml from "js-yaml";
import { type KindLabInput, kindNodes } from "./options.js";

/**
 * kube-controller-manager's controllers without the two Switchyard's slice controller replaces (the same list the
 * netns lab's controller-manager gets).
 */
export const controllersWithoutSlices = "*,-endpointslice-controller,-endpointslice-mirroring-controller";

/**
 * A kubeadm ClusterConfiguration patch, merged by kind into the config it generates. kubeadm v1beta4 writes
 * extraArgs as a list of name/value pairs; kind merges such lists by name, so its own controller-manager flags
 * (enable-hostpath-provisioner) stay. The apiVersion is explicit: without it kind would also try the patch on a
 * v1beta3 config, where extraArgs is a map and a list would not parse.
 */
export function controllerManagerPatch(): string {
  return yaml.dump({
    apiVersion: "kubeadm.k8s.io/v1beta4",
    kind: "ClusterConfiguration",
    controllerManager: { extraArgs: [{ name: "controllers", value: controllersWithoutSlices }] },
  });
}

export interface KindNodeConfig {
  role: "control-plane" | "worker";
  image: string;
  labels: Record<string, string>;
}

export interface KindClusterConfig {
  kind: "Cluster";
  apiVersion: "kind.x-k8s.io/v1alpha4";
  name: string;
  networking: { kubeProxyMode: "none"; podSubnet: string; serviceSubnet: string };
  kubeadmConfigPatches: string[];
  nodes: KindNodeConfig[];
}

/**
 * The kind Cluster config for a lab: no kube-proxy from kind (kubeadm skips its kube-proxy addon, ours is applied
 * from apps/kube-proxy/deploy), no upstream EndpointSlice controllers, the netns lab's pod and service ranges, and
 * a zone label on every node. kind's own CNI (kindnet) stays: it reaches the apiserver without a Service.
 */
export function kindClusterConfig(input: KindLabInput): KindClusterConfig {
  return {
    kind: "Cluster",
    apiVersion: "kind.x-k8s.io/v1alpha4",
    name: input.name,
    networking: { kubeProxyMode: "none", podSubnet: input.clusterCidr, serviceSubnet: input.serviceCidr },
    kubeadmConfigPatches: [controllerManagerPatch()],
    nodes: kindNodes(input).map((n) => ({
      role: n.role,
      image: input.nodeImage,
      labels: { "topology.kubernetes.io/zone": n.zone },
    })),
  };
}

/** The config as the file `kind create cluster --config` reads. */
export function renderKindConfig(input: KindLabInput): string {
  return `# Written by switchyard-lab up --runtime kind (lab/src/kind/cluster-config.ts).\n${yaml.dump(
    kindClusterConfig(input),
    { lineWidth: -1 },
  )}`;
}
