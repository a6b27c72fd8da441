// Writes test objects through a test control plane's apiserver the way a scheduler and kubelet would
// have left them, and reads back what an EndpointSlice controller needs. There is neither in a test
// control plane, so Pods are bound by setting spec.nodeName and given their status through /status.
import { formatTime } from "@switchyard/kube";
import type {
  Container,
  Event as CoreEvent,
  Namespace,
  Node,
  Pod,
  Service,
  ServiceSpec,
} from "kubernetes-types/core/v1.js";
import type { Endpoint, EndpointSlice as EndpointSliceV130 } from "kubernetes-types/discovery/v1.js";
import type { Api } from "./api.js";

/**
 * An EndpointSlice as listed: `endpoints` is always present (the apiserver omits it when empty), so
 * callers can compare it with slices they computed. Assignable to `@switchyard/slice-controller`'s type.
 */
export interface ListedSlice extends Omit<EndpointSliceV130, "endpoints"> {
  endpoints: Endpoint[];
}

interface List<T> {
  metadata: { resourceVersion: string };
  items: T[];
}

const SLICES = "/apis/discovery.k8s.io/v1";

export async function createNamespace(api: Api, name: string): Promise<void> {
  await api.post<Namespace>("/api/v1/namespaces", { metadata: { name } });
}

export async function createNode(api: Api, name: string, zone: string, cpu: string): Promise<Node> {
  await api.post<Node>("/api/v1/nodes", {
    metadata: { name, labels: { "topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name } },
  });
  const now = formatTime(Date.now());
  return api.mergePatch<Node>(`/api/v1/nodes/${name}/status`, {
    status: {
      capacity: { cpu, memory: "8Gi", pods: "500" },
      allocatable: { cpu, memory: "8Gi", pods: "500" },
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
    },
  });
}

export interface PodSpecOptions {
  name: string;
  node: string;
  ips: string[];
  ready?: boolean;
  labels?: Record<string, string>;
  hostname?: string;
  subdomain?: string;
  containers?: Container[];
  initContainers?: Container[];
}

export async function createPod(api: Api, namespace: string, o: PodSpecOptions): Promise<Pod> {
  const spec: NonNullable<Pod["spec"]> = {
    nodeName: o.node,
    containers: o.containers ?? [{ name: "app", image: "registry.example/app:1" }],
  };
  if (o.initContainers) spec.initContainers = o.initContainers;
  if (o.hostname) spec.hostname = o.hostname;
  if (o.subdomain) spec.subdomain = o.subdomain;
  await api.post<Pod>(`/api/v1/namespaces/${namespace}/pods`, {
    metadata: { name: o.name, labels: o.labels ?? { app: "web" } },
    spec,
  });
  return setPodReady(api, namespace, o.name, o.ips, o.ready ?? true);
}

export async function setPodReady(
  api: Api,
  namespace: string,
  name: string,
  ips: string[],
  ready: boolean,
): Promise<Pod> {
  const now = formatTime(Date.now());
  const status = ready ? "True" : "False";
  return api.mergePatch<Pod>(`/api/v1/namespaces/${namespace}/pods/${name}/status`, {
    status: {
      phase: "Running",
      podIP: ips[0],
      podIPs: ips.map((ip) => ({ ip })),
      conditions: [
        { type: "Ready", status, lastTransitionTime: now },
        { type: "ContainersReady", status, lastTransitionTime: now },
      ],
    },
  });
}

/** Creates many Pods a few at a time; the lab apiserver is shared with other work. */
export async function createPods(
  api: Api,
  namespace: string,
  pods: readonly PodSpecOptions[],
): Promise<void> {
  const batch = 16;
  for (let i = 0; i < pods.length; i += batch) {
    await Promise.all(pods.slice(i, i + batch).map((p) => createPod(api, namespace, p)));
  }
}

export async function createService(
  api: Api,
  namespace: string,
  name: string,
  spec: ServiceSpec,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<Service> {
  return api.post<Service>(`/api/v1/namespaces/${namespace}/services`, {
    metadata: { name, ...metadata },
    spec,
  });
}

export async function deletePod(api: Api, namespace: string, name: string, gracePeriodSeconds: number) {
  await api.delete(`/api/v1/namespaces/${namespace}/pods/${name}`, {
    kind: "DeleteOptions",
    apiVersion: "v1",
    gracePeriodSeconds,
  });
}

export async function listSlices(
  api: Api,
  namespace: string,
  service: string,
): Promise<{ resourceVersion: string; slices: ListedSlice[] }> {
  const selector = encodeURIComponent(`kubernetes.io/service-name=${service}`);
  const list = await api.get<List<EndpointSliceV130>>(
    `${SLICES}/namespaces/${namespace}/endpointslices?labelSelector=${selector}`,
  );
  const slices = list.items.map((s) => ({ ...s, endpoints: s.endpoints ?? [] }));
  return { resourceVersion: list.metadata.resourceVersion, slices };
}

export async function sliceCollectionVersion(api: Api, namespace: string): Promise<string> {
  const list = await api.get<List<EndpointSliceV130>>(
    `${SLICES}/namespaces/${namespace}/endpointslices?limit=1`,
  );
  return list.metadata.resourceVersion;
}

/** The inputs upstream's controller read from its informers, read back from the apiserver. */
export async function readInputs(
  api: Api,
  namespace: string,
  service: string,
): Promise<{ service: Service; pods: Pod[]; nodes: Node[] }> {
  const svc = await api.get<Service>(`/api/v1/namespaces/${namespace}/services/${service}`);
  const selector = Object.entries(svc.spec?.selector ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = await api.get<List<Pod>>(
    `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`,
  );
  const nodes = await api.get<List<Node>>("/api/v1/nodes");
  return { service: svc, pods: pods.items, nodes: nodes.items };
}

export { SLICES };

/** When the Pod's Ready condition last changed: upstream's trigger time for a Pod change. */
export function readyTransition(pod: Pod): Date | undefined {
  const ready = pod.status?.conditions?.find((c) => c.type === "Ready");
  return ready?.lastTransitionTime ? new Date(ready.lastTransitionTime) : undefined;
}

/**
 * The Events upstream's EndpointSlice controller recorded on a Service, oldest first. The apiserver
 * records some of its own (its ClusterIP repair loop), which are left out.
 */
export async function controllerEvents(api: Api, namespace: string, service: string): Promise<string[]> {
  const selector = encodeURIComponent(`involvedObject.kind=Service,involvedObject.name=${service}`);
  const list = await api.get<List<CoreEvent>>(
    `/api/v1/namespaces/${namespace}/events?fieldSelector=${selector}`,
  );
  return list.items
    .filter((e) => e.source?.component === "endpoint-slice-controller")
    .map((e) => `${e.type} ${e.reason}: ${e.message}`);
}
