import {
  formatTime,
  type HttpRestClient,
  Informer,
  isNotFound,
  patchContentTypes,
  pods,
} from "@switchyard/kube";
import type { Node, Pod } from "kubernetes-types/core/v1.js";
import { Ipam } from "../../agent/ipam.js";
import { renewLease } from "../../agent/node-heartbeat.js";
import { nodeCapacity } from "../../agent/node-object.js";
import { podStatus } from "../../agent/pod-status.js";
import type { ScenarioLab } from "./scenario-lab.js";

/**
 * Hollow nodes, as Kubernetes' own scale tests (kubemark) use them: Node objects with a Lease, a Ready condition
 * and a pod CIDR from the controller-manager, but no namespace and no agent; this module plays their kubelet for
 * pause pods only (an address from the node's CIDR, Ready status, and finalizing graceful deletions).
 *
 * Why: the lab's netns nodes take 110 pods each (the kubelet's default max-pods) and each has a /24 pod CIDR, so a
 * 3-node lab holds about 330 pods; a 5000-pod Service needs about 46 nodes, as it would in a real cluster. What the
 * slice scenarios measure happens in the API (pods, slices, the controller's writes), not in the kernel.
 *
 * The nodes carry no `kubernetes.io/os` label (the DaemonSets select on it, so no proxy or DNS pod lands there) and
 * a NoSchedule taint (nothing else is scheduled there); pods are bound to them by `spec.nodeName`.
 */
export const hollowLabel = "switchyard.dev/hollow";

export interface HollowNode {
  name: string;
  zone: string;
  /** Undefined until the controller-manager has given the node a pod CIDR. */
  ipams: Ipam[] | undefined;
  node: Node;
  used: number;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; the first error wins, after all settle. */
export async function inPool<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item).catch((err) => {
        failure ??= err;
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure;
}

export class HollowNodes {
  readonly nodes: HollowNode[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private stopWatch: (() => void) | undefined;
  private readonly finalizing = new Set<string>();
  private readonly ipOf = new Map<string, { node: HollowNode; ips: string[] }>();

  constructor(
    private readonly lab: ScenarioLab,
    private readonly namespace: string,
    readonly podsPerNode = Number(nodeCapacity.pods),
  ) {}

  private get client(): HttpRestClient {
    return this.lab.client;
  }

  /** Creates `count` hollow nodes spread over `zones`, waits for their pod CIDRs, and keeps them alive. */
  async start(count: number, zones: readonly string[]): Promise<void> {
    const prefix = this.lab.prefix;
    const names = Array.from({ length: count }, (_, i) => `${prefix}-hollow-${i + 1}`);
    await inPool(names, 8, async (name) => {
      const i = names.indexOf(name);
      const zone = zones[i % zones.length] ?? "zone-a";
      const body: Node = {
        apiVersion: "v1",
        kind: "Node",
        metadata: {
          name,
          labels: {
            "kubernetes.io/hostname": name,
            "topology.kubernetes.io/zone": zone,
            [hollowLabel]: "true",
          },
        },
        spec: { taints: [{ key: hollowLabel, value: "true", effect: "NoSchedule" }] },
      };
      const node = await this.client.call<Node>("POST", "/api/v1/nodes", body);
      const h: HollowNode = { name, zone, node, used: 0, ipams: undefined };
      this.nodes.push(h);
      h.node = await this.postReady(name, i);
      await renewLease(this.client, node);
    });
    this.nodes.sort((a, b) => names.indexOf(a.name) - names.indexOf(b.name));
    await this.lab.until(`pod CIDRs for ${count} hollow nodes`, async () => {
      let missing = 0;
      for (const h of this.nodes) {
        if (h.ipams) continue;
        const n = await this.client.call<Node>("GET", `/api/v1/nodes/${h.name}`);
        // A dual-stack cluster gives each node a pod CIDR per family (spec.podCIDRs), and pods an address of each.
        const cidrs = n.spec?.podCIDRs?.length ? n.spec.podCIDRs : n.spec?.podCIDR ? [n.spec.podCIDR] : [];
        if (cidrs.length > 0) h.ipams = cidrs.map((c) => new Ipam(c));
        else missing++;
      }
      return missing === 0 ? true : `${missing} without a pod CIDR`;
    });
    // The node-lifecycle controller marks a node's pods unready ~40 s after its Lease stops: keep renewing.
    this.heartbeat = setInterval(() => {
      for (const h of this.nodes) void renewLease(this.client, h.node).catch(() => {});
    }, 10_000);
    this.watchDeletions();
  }

  /** A kubelet finalizes a graceful deletion once the containers stopped; a pause pod has none, so at once. */
  private watchDeletions(): void {
    const hollow = new Set(this.nodes.map((h) => h.name));
    const informer = new Informer<Pod>({ client: this.client, resource: pods, namespace: this.namespace });
    const changed = (pod: Pod) => {
      const uid = pod.metadata?.uid ?? "";
      if (
        !pod.metadata?.deletionTimestamp ||
        !hollow.has(pod.spec?.nodeName ?? "") ||
        this.finalizing.has(uid)
      )
        return;
      this.finalizing.add(uid);
      void this.forceDelete(pod).finally(() => this.release(uid));
    };
    informer.addEventHandler({
      onAdd: changed,
      onUpdate: (old, pod) => {
        // Keyed by name, the cache can replace a pod with its namesake across a relist: the old one is gone.
        if (old.metadata?.uid !== pod.metadata?.uid) this.release(old.metadata?.uid ?? "");
        changed(pod);
      },
      onDelete: (pod) => this.release(pod.metadata?.uid ?? ""),
    });
    informer.start();
    this.stopWatch = () => void informer.stop();
  }

  private release(uid: string): void {
    const held = this.ipOf.get(uid);
    if (!held) return;
    held.node.ipams?.forEach((ipam, i) => {
      const ip = held.ips[i];
      if (ip) ipam.release(ip);
    });
    held.node.used--;
    this.ipOf.delete(uid);
  }

  private async forceDelete(pod: Pod): Promise<void> {
    await this.client
      .call("DELETE", `/api/v1/namespaces/${this.namespace}/pods/${pod.metadata?.name}`, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata?.uid },
      })
      .catch((err) => {
        if (!isNotFound(err)) throw err;
      });
  }

  private async postReady(name: string, i: number): Promise<Node> {
    const t = formatTime(Date.now());
    const condition = (type: string, status: string, reason: string) => ({
      type,
      status,
      reason,
      message: "hollow node of a switchyard scenario",
      lastHeartbeatTime: t,
      lastTransitionTime: t,
    });
    const capacity = { ...nodeCapacity, pods: String(this.podsPerNode) };
    const status = {
      capacity,
      allocatable: capacity,
      // TEST-NET-2: documentation addresses that route nowhere; nothing ever connects to a hollow node.
      addresses: [
        { type: "InternalIP", address: `198.51.100.${(i % 254) + 1}` },
        { type: "Hostname", address: name },
      ],
      conditions: [
        condition("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        condition("PIDPressure", "False", "KubeletHasSufficientPID"),
        condition("Ready", "True", "KubeletReady"),
      ],
    };
    return this.client.call<Node>(
      "PATCH",
      `/api/v1/nodes/${name}/status`,
      { status },
      patchContentTypes["strategic-merge"],
    );
  }

  /** The least used node, as the scheduler's spreading would pick. */
  private place(): HollowNode & { ipams: Ipam[] } {
    const h = [...this.nodes].sort((a, b) => a.used - b.used)[0];
    if (!h?.ipams || h.used >= this.podsPerNode)
      throw new Error(`the ${this.nodes.length} hollow nodes are full (${this.podsPerNode} pods each)`);
    h.used++;
    return h as HollowNode & { ipams: Ipam[] };
  }

  /** Creates pause pods bound to hollow nodes and reports them Running and Ready with an address, as a kubelet. */
  async runPods(pods: readonly Pod[], concurrency = 24): Promise<void> {
    await inPool(pods, concurrency, async (template) => {
      const h = this.place();
      const body: Pod = {
        ...template,
        spec: { ...template.spec, containers: template.spec?.containers ?? [], nodeName: h.name },
      };
      const created = await this.client.call<Pod>("POST", `/api/v1/namespaces/${this.namespace}/pods`, body);
      const ips = h.ipams.map((ipam) => ipam.allocate());
      this.ipOf.set(created.metadata?.uid ?? "", { node: h, ips });
      const hostIp = h.node.status?.addresses?.[0]?.address ?? "198.51.100.1";
      const status = podStatus(
        created,
        {
          hostIps: [hostIp],
          podIps: ips,
          startTime: formatTime(Date.now()),
          sandboxReady: true,
          containers: (created.spec?.containers ?? []).map((c) => ({
            name: c.name,
            image: c.image ?? "",
            state: { running: { startedAt: formatTime(Date.now()) } },
            lastState: {},
            restartCount: 0,
            ready: true,
          })),
        },
        new Date(),
      );
      await this.client.call(
        "PATCH",
        `/api/v1/namespaces/${this.namespace}/pods/${created.metadata?.name}/status`,
        { status },
        patchContentTypes.merge,
      );
    });
  }

  /**
   * Removes every pod of the namespace (no kubelet would finalize them once the nodes are gone), then the nodes and
   * their Leases. The finalizing watch and the heartbeat run until the pods are gone: the namespace controller's
   * graceful deletions need them, and thousands of deletions outlast one request's timeout.
   */
  async remove(): Promise<void> {
    const podsPath = `/api/v1/namespaces/${this.namespace}/pods`;
    await this.client
      .call("DELETE", podsPath, { apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0 })
      .catch(() => {});
    await this.lab.until(
      "the hollow nodes' pods to be deleted",
      async () => {
        const left = (await this.client.call<{ items: Pod[] }>("GET", `${podsPath}?limit=500`)).items;
        if (left.length === 0) return true;
        await inPool(left, 16, (pod) => this.forceDelete(pod));
        return `${left.length}+ pods left`;
      },
      600_000,
    );
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.stopWatch?.();
    await inPool(this.nodes, 8, async (h) => {
      for (const path of [
        `/api/v1/nodes/${h.name}`,
        `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${h.name}`,
      ])
        await this.client.call("DELETE", path).catch((err) => {
          if (!isNotFound(err)) throw err;
        });
    });
  }
}
