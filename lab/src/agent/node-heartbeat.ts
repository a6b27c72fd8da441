import {
  type HttpRestClient,
  isAlreadyExists,
  isNotFound,
  type Logger,
  patchContentTypes,
} from "@switchyard/kube";
import type { Lease } from "kubernetes-types/coordination/v1.js";
import type { Node } from "kubernetes-types/core/v1.js";
import type { NodePlan } from "./host/netns.js";
import { nodeObject, nodeStatus } from "./node-object.js";

const leaseSeconds = 40;

export interface Heartbeat {
  stop(): void;
}

/** Creates the Node object (or takes over an existing one, as a restarted kubelet does) and sets its labels. */
export async function registerNode(client: HttpRestClient, node: NodePlan): Promise<Node> {
  const body = nodeObject(node);
  try {
    return await client.call<Node>("POST", "/api/v1/nodes", body);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    return client.call<Node>(
      "PATCH",
      `/api/v1/nodes/${node.name}`,
      { metadata: body.metadata },
      patchContentTypes.merge,
    );
  }
}

/**
 * Polls until the controller-manager's node IPAM has given the node its pod CIDRs: one per family of a dual-stack
 * cluster (`spec.podCIDRs`, the primary first), else the one `spec.podCIDR`.
 */
export async function waitForPodCidrs(
  client: HttpRestClient,
  node: NodePlan,
  signal: AbortSignal,
): Promise<string[]> {
  while (!signal.aborted) {
    const current = await client.call<Node>("GET", `/api/v1/nodes/${node.name}`);
    if (current.spec?.podCIDRs?.length) return current.spec.podCIDRs;
    if (current.spec?.podCIDR) return [current.spec.podCIDR];
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("stopped while waiting for a pod CIDR");
}

export async function postNodeStatus(client: HttpRestClient, node: NodePlan, ready: boolean): Promise<void> {
  const current = await client.call<Node>("GET", `/api/v1/nodes/${node.name}`);
  const status = nodeStatus(node, ready, new Date(), current.status?.conditions);
  // A JSON merge patch replaces the lists whole: a strategic merge keys `addresses` by type, and a dual-stack node's
  // two InternalIPs would merge into a duplicate, which the apiserver refuses.
  await client.call("PATCH", `/api/v1/nodes/${node.name}/status`, { status }, patchContentTypes.merge);
}

/** The Lease in kube-node-lease that tells the node-lifecycle controller this node is alive. */
export async function renewLease(client: HttpRestClient, node: Node): Promise<void> {
  const name = node.metadata?.name ?? "";
  const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`;
  const renewTime = new Date().toISOString().replace("Z", "000Z");
  try {
    await client.call<Lease>(
      "PATCH",
      path,
      { spec: { renewTime, holderIdentity: name } },
      patchContentTypes.merge,
    );
  } catch (err) {
    if (!isNotFound(err)) throw err;
    const lease: Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name,
        namespace: "kube-node-lease",
        ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: node.metadata?.uid ?? "" }],
      },
      spec: { holderIdentity: name, leaseDurationSeconds: leaseSeconds, renewTime },
    };
    await client.call("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lease);
  }
}

/** Renews the Lease and refreshes the Ready condition every `periodMs` until stopped; failures are logged. */
export function startHeartbeat(
  client: HttpRestClient,
  plan: NodePlan,
  node: Node,
  log: Logger,
  periodMs = 10_000,
): Heartbeat {
  let stopped = false;
  const beat = async () => {
    try {
      await renewLease(client, node);
      await postNodeStatus(client, plan, true);
    } catch (err) {
      log.warn("heartbeat failed", { error: (err as Error).message });
    }
  };
  void beat();
  const timer = setInterval(() => {
    if (!stopped) void beat();
  }, periodMs);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
