import { formatTime } from "@switchyard/kube";
import type { Node, NodeCondition, NodeStatus } from "kubernetes-types/core/v1.js";
import type { NodePlan } from "./host/netns.js";

/** What every lab node offers the scheduler; pods are processes, so these are nominal. */
export const nodeCapacity = { cpu: "2", memory: "4Gi", pods: "110", "ephemeral-storage": "10Gi" };

/** Where the agent's kubelet API listens on the node's IP (kubelet-api/server.ts); the kubelet's default port. */
export const kubeletPort = 10250;

export function nodeObject(node: NodePlan): Node {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: node.name,
      labels: {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/zone": node.zone,
        "switchyard.dev/lab-runtime": "netns",
      },
    },
  };
}

/**
 * The node's status as a kubelet reports it. `ready` is false until the pod network (cbr0) exists, like a kubelet
 * whose network plugin is not ready yet; transition times are kept from `previous` when the status did not change.
 */
export function nodeStatus(
  node: NodePlan,
  ready: boolean,
  now: Date,
  previous?: NodeCondition[],
): NodeStatus {
  const stamp = formatTime(now.getTime());
  const condition = (
    type: string,
    status: "True" | "False",
    reason: string,
    message: string,
  ): NodeCondition => {
    const before = previous?.find((c) => c.type === type);
    return {
      type,
      status,
      reason,
      message,
      lastHeartbeatTime: stamp,
      lastTransitionTime: before && before.status === status ? before.lastTransitionTime : stamp,
    };
  };
  return {
    capacity: nodeCapacity,
    allocatable: nodeCapacity,
    // The apiserver dials this port for logs and the node proxy.
    daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } },
    // One InternalIP per family, the primary first, as a kubelet with a dual-stack --node-ip reports them.
    addresses: [
      ...node.ips.map((address) => ({ type: "InternalIP", address })),
      { type: "Hostname", address: node.name },
    ],
    conditions: [
      condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "lab node"),
      condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "lab node"),
      condition("PIDPressure", "False", "KubeletHasSufficientPID", "lab node"),
      ready
        ? condition("Ready", "True", "KubeletReady", "switchyard lab agent is posting ready status")
        : condition("Ready", "False", "KubeletNotReady", "pod network not ready: waiting for a pod CIDR"),
    ],
    nodeInfo: {
      machineID: node.name,
      systemUUID: node.name,
      bootID: node.name,
      kernelVersion: "",
      osImage: "switchyard lab (network namespaces)",
      containerRuntimeVersion: "switchyard-lab://0.1.0",
      kubeletVersion: "v0.1.0-switchyard-lab",
      kubeProxyVersion: "",
      operatingSystem: "linux",
      architecture: "amd64",
    },
  };
}
