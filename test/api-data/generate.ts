// Generated API objects for the property test of issue #11: every kind Switchyard watches, as a valid "full"
// object plus the paths of its optional lists, maps and pointers, and variants where those paths are absent,
// null (as the apiserver writes a Go nil without omitempty), empty, or full.

import type { EndpointHints, ServiceCIDR } from "@switchyard/basics";
// The repo's one seeded PRNG (mulberry32), so a failing seed replays the same objects.
import { prng } from "@switchyard/kube/testing";
import type { Lease } from "kubernetes-types/coordination/v1.js";
import type { Endpoints, Namespace, Node, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

export { prng };

export type Form = "absent" | "null" | "empty" | "full";
export const FORMS: readonly Form[] = ["absent", "null", "empty", "full"];

export type KindName =
  | "Service"
  | "EndpointSlice"
  | "Endpoints"
  | "Pod"
  | "Node"
  | "Namespace"
  | "ServiceCIDR"
  | "Lease";

/** The objects of one generated cluster, by kind. Services and Pods come in pairs (see fullCluster). */
export interface Cluster {
  Service: Service[];
  EndpointSlice: EndpointSlice[];
  Endpoints: Endpoints[];
  Pod: Pod[];
  Node: Node[];
  Namespace: Namespace[];
  ServiceCIDR: ServiceCIDR[];
  Lease: Lease[];
}

/** "a.b[].c": `[]` means every element of the list at that point. */
const METADATA_PATHS = [
  "metadata.labels",
  "metadata.annotations",
  "metadata.ownerReferences",
  "metadata.finalizers",
];

/** The optional list, map and pointer fields of each kind, the ones the issue names and the ones consumers read. */
export const OPTIONAL_PATHS: Record<KindName, readonly string[]> = {
  Service: [
    ...METADATA_PATHS,
    "spec.ports",
    "spec.selector",
    "spec.clusterIPs",
    "spec.ipFamilies",
    "spec.externalIPs",
    "spec.loadBalancerSourceRanges",
    "status.loadBalancer.ingress",
    "status.conditions",
  ],
  EndpointSlice: [
    ...METADATA_PATHS,
    "endpoints",
    "ports",
    "endpoints[].hints",
    "endpoints[].hints.forZones",
    "endpoints[].hints.forNodes",
    "endpoints[].deprecatedTopology",
    "endpoints[].conditions",
  ],
  Endpoints: [
    ...METADATA_PATHS,
    "subsets",
    "subsets[].addresses",
    "subsets[].notReadyAddresses",
    "subsets[].ports",
  ],
  Pod: [
    ...METADATA_PATHS,
    "spec.containers[].ports",
    "spec.containers[].env",
    "spec.tolerations",
    "spec.dnsConfig.nameservers",
    "spec.dnsConfig.searches",
    "spec.dnsConfig.options",
    "status.podIPs",
    "status.hostIPs",
    "status.conditions",
    "status.containerStatuses",
  ],
  Node: [
    ...METADATA_PATHS,
    "spec.podCIDRs",
    "spec.taints",
    "status.addresses",
    "status.conditions",
    "status.allocatable",
    "status.capacity",
  ],
  Namespace: [...METADATA_PATHS, "spec.finalizers"],
  ServiceCIDR: [...METADATA_PATHS, "spec.cidrs", "status.conditions"],
  // A Lease's spec is pointers to scalars: "empty" is their zero value ("" or 0).
  Lease: [
    ...METADATA_PATHS,
    "spec.holderIdentity",
    "spec.leaseDurationSeconds",
    "spec.acquireTime",
    "spec.renewTime",
    "spec.leaseTransitions",
  ],
};

export const NS = "apps";
export const NODE = "node-a";
export const SERVICE_CIDR = "10.96.0.0/16";
export const LEASE_NAMESPACE = "kube-system";
/** An ownerReferences uid of "<SERVICE_UID><name>" stands for the uid the API gives Service <name>. */
export const SERVICE_UID = "uid-of-service:";
const T0 = "2026-12-01T09:00:00Z";
const metaRest = (owner: string) => ({
  annotations: { "example.com/note": "generated" },
  ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: owner, uid: `owner-${owner}` }],
  finalizers: ["example.com/keep"],
});

/** A LoadBalancer Service selecting `app=<name>`, with every optional list and map filled. */
export function fullService(name: string, clusterIP: string): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: NS, labels: { app: name }, ...metaRest(name) },
    spec: {
      type: "LoadBalancer",
      clusterIP,
      clusterIPs: [clusterIP],
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      ports: [
        { name: "http", port: 80, targetPort: "http", protocol: "TCP", nodePort: 30080 },
        { name: "dns", port: 53, targetPort: 5353, protocol: "UDP", nodePort: 30053 },
      ],
      selector: { app: name },
      externalIPs: ["192.0.2.10"],
      loadBalancerSourceRanges: ["203.0.113.0/25"],
      sessionAffinity: "None",
      externalTrafficPolicy: "Cluster",
      // Hints make the slice controller read the Node's zone and the proxier read the endpoints' hints.
      trafficDistribution: "PreferClose",
    },
    status: {
      loadBalancer: { ingress: [{ ip: "198.51.100.7" }] },
      conditions: [
        { type: "Available", status: "True", lastTransitionTime: T0, reason: "Generated", message: "" },
      ],
    },
  };
}

/** A slice of `service` managed by the EndpointSlice controller, with one ready endpoint on `pod`. */
export function fullEndpointSlice(service: string, pod: string, ip: string): EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${service}-abcde`,
      namespace: NS,
      labels: {
        "kubernetes.io/service-name": service,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
      ...metaRest(service),
      // Owned by its Service, so the controller reconciles it rather than replacing it. The uid is the
      // Service's, known only once it is stored: seededApi (consumers.ts) fills it in.
      ownerReferences: [
        {
          apiVersion: "v1",
          kind: "Service",
          name: service,
          uid: `${SERVICE_UID}${service}`,
          controller: true,
        },
      ],
    },
    addressType: "IPv4",
    endpoints: [
      {
        addresses: [ip],
        conditions: { ready: true, serving: true, terminating: false },
        hostname: pod,
        nodeName: NODE,
        zone: "zone-a",
        targetRef: { kind: "Pod", name: pod, namespace: NS, uid: `uid-${pod}` },
        // forNodes is newer than kubernetes-types 1.30.
        hints: { forZones: [{ name: "zone-a" }], forNodes: [{ name: NODE }] } as EndpointHints,
        deprecatedTopology: { "topology.kubernetes.io/zone": "zone-a" },
      },
    ],
    ports: [
      { name: "http", port: 8080, protocol: "TCP" },
      { name: "dns", port: 5353, protocol: "UDP" },
    ],
  };
}

/** Hand-written Endpoints of a selectorless Service, one ready and one not-ready address. */
export function fullEndpoints(name: string): Endpoints {
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name, namespace: NS, labels: { app: name }, ...metaRest(name) },
    subsets: [
      {
        addresses: [{ ip: "10.0.2.7", nodeName: NODE }],
        notReadyAddresses: [{ ip: "10.0.2.8" }],
        ports: [{ name: "http", port: 9090, protocol: "TCP" }],
      },
    ],
  };
}

/** A ready Pod of `app`, on NODE, serving port "http" (8080) and 5353/UDP. */
export function fullPod(name: string, app: string, ip: string): Pod {
  const ready = (type: string) => ({ type, status: "True", lastTransitionTime: T0 });
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS, labels: { app }, ...metaRest(name) },
    spec: {
      nodeName: NODE,
      restartPolicy: "Always",
      dnsPolicy: "ClusterFirst",
      containers: [
        {
          name: "web",
          image: "switchyard/echo",
          ports: [
            { name: "http", containerPort: 8080, protocol: "TCP" },
            { containerPort: 5353, protocol: "UDP" },
          ],
          env: [{ name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }],
        },
      ],
      tolerations: [
        {
          key: "node.kubernetes.io/not-ready",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
      ],
      dnsConfig: {
        nameservers: ["192.0.2.53"],
        searches: ["example.com"],
        options: [{ name: "ndots", value: "2" }],
      },
    },
    status: {
      phase: "Running",
      hostIP: "192.168.0.2",
      hostIPs: [{ ip: "192.168.0.2" }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: T0,
      qosClass: "BestEffort",
      conditions: [ready("Initialized"), ready("Ready"), ready("ContainersReady"), ready("PodScheduled")],
      containerStatuses: [
        {
          name: "web",
          image: "switchyard/echo",
          imageID: "",
          ready: true,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: T0 } },
        },
      ],
    },
  };
}

export function fullNode(): Node {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: NODE,
      labels: { "kubernetes.io/hostname": NODE, "topology.kubernetes.io/zone": "zone-a" },
      ...metaRest(NODE),
    },
    spec: {
      podCIDR: "10.0.1.0/24",
      podCIDRs: ["10.0.1.0/24"],
      taints: [{ key: "example.com/dedicated", value: "web", effect: "NoSchedule" }],
    },
    status: {
      addresses: [
        { type: "InternalIP", address: "192.168.0.2" },
        { type: "Hostname", address: NODE },
      ],
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "",
          lastHeartbeatTime: T0,
          lastTransitionTime: T0,
        },
      ],
      allocatable: { cpu: "4", memory: "8Gi", pods: "110" },
      capacity: { cpu: "4", memory: "8Gi", pods: "110" },
    },
  };
}

export function fullNamespace(): Namespace {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: NS, labels: { "kubernetes.io/metadata.name": NS }, ...metaRest(NS) },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}

export function fullServiceCIDR(): ServiceCIDR {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "ServiceCIDR",
    metadata: { name: "kubernetes", labels: { "example.com/cidr": "primary" }, ...metaRest("kubernetes") },
    spec: { cidrs: [SERVICE_CIDR] },
    status: {
      conditions: [
        { type: "Ready", status: "True", lastTransitionTime: T0, reason: "Generated", message: "" },
      ],
    },
  };
}

/** A Lease held by another candidate, renewed long ago in MicroTime format. */
export function fullLease(): Lease {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name: "switchyard-test",
      namespace: LEASE_NAMESPACE,
      labels: { app: "lease" },
      ...metaRest("lease"),
    },
    spec: {
      holderIdentity: "someone-else",
      leaseDurationSeconds: 15,
      acquireTime: "2026-12-01T09:00:00.000000Z",
      renewTime: "2026-12-01T09:00:10.000000Z",
      leaseTransitions: 3,
    },
  };
}

/**
 * The cluster every variant starts from: Service "web" (selecting Pod web-0, with its slice) and a
 * selectorless Service "manual" whose hand-written Endpoints the mirroring controller mirrors.
 */
export function fullCluster(): Cluster {
  const manual = fullService("manual", "10.96.0.20");
  delete manual.spec?.selector;
  if (manual.spec)
    manual.spec.ports = [{ name: "http", port: 90, targetPort: 9090, protocol: "TCP", nodePort: 30090 }];
  return {
    Service: [fullService("web", "10.96.0.10"), manual],
    EndpointSlice: [fullEndpointSlice("web", "web-0", "10.0.1.5")],
    Endpoints: [fullEndpoints("manual")],
    Pod: [fullPod("web-0", "web", "10.0.1.5")],
    Node: [fullNode()],
    Namespace: [fullNamespace()],
    ServiceCIDR: [fullServiceCIDR()],
    Lease: [fullLease()],
  };
}

/** The empty form of a field whose full value is `full`: [], {}, or a scalar's zero value. */
function emptyValue(full: unknown): unknown {
  if (Array.isArray(full)) return [];
  if (typeof full === "object" && full !== null) return {};
  if (typeof full === "number") return 0;
  if (typeof full === "boolean") return false;
  return "";
}

/**
 * Sets `path` of `obj` (in place) to `form`, on every element where the path crosses a list. A path
 * whose parent is missing (an earlier path made it absent) changes nothing: there is no field to set.
 */
export function setForm(obj: unknown, path: string, form: Form): void {
  if (form === "full") return;
  const [head, ...rest] = path.split(".");
  if (head === undefined || obj === null || typeof obj !== "object") return;
  const record = obj as Record<string, unknown>;
  const each = head.endsWith("[]");
  const key = each ? head.slice(0, -2) : head;
  if (rest.length > 0) {
    const child = record[key];
    const children = each ? (Array.isArray(child) ? child : []) : [child];
    for (const c of children) setForm(c, rest.join("."), form);
    return;
  }
  // A null can stand where nothing was (the apiserver writes one for any nil field); an empty value needs
  // the full one to know whether it is a list, a map or a scalar.
  if (form === "null") record[key] = null;
  else if (!(key in record)) return;
  else if (form === "absent") delete record[key];
  else record[key] = emptyValue(record[key]);
}

/** One object of a cluster changed: which one, where, to what. */
export interface Change {
  kind: KindName;
  /** Index in the cluster's list of that kind. */
  index: number;
  path: string;
  form: Form;
}

export function describeChange(c: Change): string {
  return `${c.kind}[${c.index}] ${c.path}=${c.form}`;
}

/** The full cluster with `changes` applied; a fresh copy every call. */
export function clusterWith(changes: readonly Change[]): Cluster {
  const cluster = fullCluster();
  for (const c of changes) {
    const obj = (cluster[c.kind] as unknown[])[c.index];
    setForm(obj, c.path, c.form);
  }
  return cluster;
}

/** Every (object, path) of the full cluster that a variant can change. */
export function changeablePaths(): { kind: KindName; index: number; path: string }[] {
  const cluster = fullCluster();
  const out: { kind: KindName; index: number; path: string }[] = [];
  for (const kind of Object.keys(OPTIONAL_PATHS) as KindName[]) {
    const count = (cluster[kind] as unknown[]).length;
    for (let index = 0; index < count; index++) {
      for (const path of OPTIONAL_PATHS[kind]) out.push({ kind, index, path });
    }
  }
  return out;
}

/** For every changeable path and every form but full: the one-path variants. */
export function singlePathVariants(): {
  path: { kind: KindName; index: number; path: string };
  form: Form;
}[] {
  return changeablePaths().flatMap((path) =>
    (["absent", "null", "empty"] as const).map((form) => ({ path, form })),
  );
}

/** A random cluster: every changeable path independently takes one of the four forms. */
export function randomChanges(random: () => number): Change[] {
  return changeablePaths().map((p) => ({ ...p, form: FORMS[Math.floor(random() * FORMS.length)] ?? "full" }));
}
