import yaml from "js-yaml";
import type { ProxyMode, StackKind } from "../stack/manifests.js";
import { type KindLabInput, kindNodes } from "./options.js";

/**
 * kube-controller-manager's controllers without the two Switchyard's slice controller replaces. kubeadm's own
 * value is `*,bootstrapsigner,tokencleaner` (those two are off by default): without bootstrapsigner the
 * cluster-info ConfigMap is never signed and `kubeadm join` waits for it forever, so they stay.
 */
export const controllersWithoutSlices =
  "*,bootstrapsigner,tokencleaner,-endpointslice-controller,-endpointslice-mirroring-controller";

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

/**
 * kubelet ≥ 1.35 refuses to start on a cgroup v1 host unless told otherwise (this CI machine is one; kindest/node
 * there would fail the same way). On cgroup v2, the usual case, the setting changes nothing.
 */
export function kubeletPatch(): string {
  return yaml.dump({
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    failCgroupV1: false,
  });
}

/**
 * kubeadm's preflight system verification fails on a cgroup v1 host (the same check kubelet ≥ 1.35 makes); on
 * init and on every join it is downgraded to a warning, as `--ignore-preflight-errors=SystemVerification` does.
 */
export function preflightPatches(): string[] {
  const nodeRegistration = { ignorePreflightErrors: ["SystemVerification"] };
  return ["InitConfiguration", "JoinConfiguration"].map((kind) =>
    yaml.dump({ apiVersion: "kubeadm.k8s.io/v1beta4", kind, nodeRegistration }),
  );
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
  networking: {
    kubeProxyMode: "none" | ProxyMode;
    disableDefaultCNI: true;
    podSubnet: string;
    serviceSubnet: string;
  };
  kubeadmConfigPatches: string[];
  nodes: KindNodeConfig[];
}

/** The stack a kind cluster is made for; without one (--no-stack) the cluster is made as for Switchyard's. */
export interface KindStackChoice {
  kind: StackKind;
  proxyMode: ProxyMode;
}

/**
 * The kind Cluster config for a lab: the netns lab's pod and service ranges and a zone label on every node. No
 * kindnet: the lab writes each node's pod network itself (pod-network.ts). For Switchyard's stack, no kube-proxy
 * from kind (kubeadm skips its kube-proxy addon; ours is applied from apps/kube-proxy/deploy) and no upstream
 * EndpointSlice controllers. For upstream's, kind's kube-proxy in the chosen mode and kubeadm's controllers.
 */
export function kindClusterConfig(input: KindLabInput, stack?: KindStackChoice): KindClusterConfig {
  const upstream = stack?.kind === "upstream";
  return {
    kind: "Cluster",
    apiVersion: "kind.x-k8s.io/v1alpha4",
    name: input.name,
    networking: {
      kubeProxyMode: upstream ? stack.proxyMode : "none",
      disableDefaultCNI: true,
      podSubnet: input.clusterCidr,
      serviceSubnet: input.serviceCidr,
    },
    kubeadmConfigPatches: [
      ...(upstream ? [] : [controllerManagerPatch()]),
      kubeletPatch(),
      ...preflightPatches(),
    ],
    nodes: kindNodes(input).map((n) => ({
      role: n.role,
      image: input.nodeImage,
      labels: { "topology.kubernetes.io/zone": n.zone },
    })),
  };
}

/** The config as the file `kind create cluster --config` reads. */
export function renderKindConfig(input: KindLabInput, stack?: KindStackChoice): string {
  return `# Written by switchyard-lab up --runtime kind (lab/src/kind/cluster-config.ts).\n${yaml.dump(
    kindClusterConfig(input, stack),
    { lineWidth: -1 },
  )}`;
}
