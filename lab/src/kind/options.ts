import type { UpstreamVersions } from "@switchyard/testbed/upstream";
import { defaultLabInput, type IpFamily, networksFor, perFamily, zoneName } from "../netns/plan.js";

/** A kind lab's shape: everything the cluster config, the node names and the stack are derived from. */
export interface KindLabInput {
  /** The kind cluster's name; kind names the node containers after it. */
  name: string;
  /** Nodes that run pods (kind workers). The control-plane node comes on top, as the netns lab's control plane does. */
  nodes: number;
  zones: number;
  /** The cluster's address families, as kind's networking.ipFamily; absent in labs made before it: ipv4. */
  ipFamily?: IpFamily;
  /** One range per family, comma-separated, the primary first (as kubeadm's podSubnet and serviceSubnet). */
  clusterCidr: string;
  serviceCidr: string;
  /** The kindest/node image every node container runs. */
  nodeImage: string;
}

export function defaultKindInput(
  versions: Pick<UpstreamVersions, "kubernetes">,
  ipFamily: IpFamily = "ipv4",
): KindLabInput {
  // The netns lab's ranges for the family (also kind's own defaults), so manifests and docs hold for both runtimes.
  const networks = networksFor(ipFamily);
  return {
    name: "switchyard",
    nodes: defaultLabInput.nodes,
    zones: defaultLabInput.zones,
    ipFamily,
    clusterCidr: networks.clusterCidr,
    serviceCidr: networks.serviceCidr,
    nodeImage: `kindest/node:${versions.kubernetes}`,
  };
}

export interface KindNodePlan {
  /** The Node object's name, which is also the node container's name. */
  name: string;
  role: "control-plane" | "worker";
  zone: string;
}

/**
 * The nodes as kind will name them: `<name>-control-plane`, then `<name>-worker`, `<name>-worker2`, ... Workers
 * take zones round-robin like the netns lab's nodes; the control-plane node gets the first zone (the slice
 * controller leaves control-plane nodes out of topology hints, so it does not skew them).
 */
export function kindNodes(input: KindLabInput): KindNodePlan[] {
  const workers = Array.from({ length: input.nodes }, (_, i) => ({
    name: `${input.name}-worker${i === 0 ? "" : i + 1}`,
    role: "worker" as const,
    zone: zoneName(i % input.zones),
  }));
  return [{ name: `${input.name}-control-plane`, role: "control-plane", zone: zoneName(0) }, ...workers];
}

// kind's own rule for cluster names (they become parts of container and network names).
const clusterName = /^[a-z0-9.-]+$/;

/** The oldest node image whose kind config uses kubeadm v1beta4, the format our extraArgs patch is written in. */
export const minNodeMinor = 36;

/** Checks the input; every error is one line naming the flag. */
export function validateKindInput(input: KindLabInput): void {
  if (!clusterName.test(input.name))
    throw new Error(`--name must match ${clusterName.source} (kind's rule), got "${input.name}"`);
  if (!Number.isInteger(input.nodes) || input.nodes < 1 || input.nodes > 20)
    throw new Error(`--nodes must be 1-20, got ${input.nodes}`);
  if (!Number.isInteger(input.zones) || input.zones < 1 || input.zones > 26)
    throw new Error(`--zones must be 1-26, got ${input.zones}`);
  const family = input.ipFamily ?? "ipv4";
  perFamily("cluster-cidr", input.clusterCidr, family);
  perFamily("service-cidr", input.serviceCidr, family);
  const tag = /^kindest\/node:v1\.(\d+)\./.exec(input.nodeImage);
  if (tag?.[1] && Number(tag[1]) < minNodeMinor)
    throw new Error(
      `--node-image ${input.nodeImage}: the kind runtime needs Kubernetes v1.${minNodeMinor} or newer (kubeadm v1beta4 config)`,
    );
}
