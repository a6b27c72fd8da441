import { serviceNameLabel } from "@switchyard/kube";
import type { Service, ServicePort } from "kubernetes-types/core/v1.js";
import type { Endpoint, EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { nodeHints, zoneHints } from "../scenarios/kit/topology-path.js";
import type { EndpointCounts, EndpointView, HintState, ServiceView, SliceView } from "./view-model.js";

const topologyModeAnnotation = "service.kubernetes.io/topology-mode";

// The conditions as kube-proxy reads them: an unset ready means ready, an unset serving follows ready.
const isReady = (e: Endpoint) => e.conditions?.ready !== false;
const isServing = (e: Endpoint) => e.conditions?.serving ?? isReady(e);
const hasHints = (e: Endpoint) => zoneHints(e).length + nodeHints(e).length > 0;

const servicePort = (p: ServicePort) =>
  `${p.name ? `${p.name} ` : ""}${p.port}/${p.protocol ?? "TCP"}${p.targetPort !== undefined ? `→${p.targetPort}` : ""}${p.nodePort ? ` (node ${p.nodePort})` : ""}`;

function endpointView(e: Endpoint): EndpointView {
  return {
    addresses: e.addresses,
    pod: e.targetRef?.kind === "Pod" ? (e.targetRef.name ?? "") : "",
    node: e.nodeName ?? "",
    zone: e.zone ?? "",
    ready: isReady(e),
    serving: isServing(e),
    terminating: e.conditions?.terminating === true,
    ...(hasHints(e)
      ? {
          hints: { zones: zoneHints(e), nodes: nodeHints(e) },
        }
      : {}),
  };
}

export function countEndpoints(slices: readonly EndpointSlice[]): EndpointCounts {
  const all = slices.flatMap((s) => s.endpoints ?? []);
  const ready = all.filter(isReady);
  return {
    total: all.length,
    ready: ready.length,
    serving: all.filter(isServing).length,
    terminating: all.filter((e) => e.conditions?.terminating === true).length,
    hinted: ready.filter(hasHints).length,
  };
}

/**
 * kube-proxy uses hints only when every ready endpoint of the Service has one; a single endpoint without makes
 * it ignore them all (pkg/proxy/topology.go), which is the moment a Service's traffic stops staying local.
 */
export const hintState = (c: EndpointCounts): HintState =>
  c.hinted === 0 ? "none" : c.hinted === c.ready ? "all" : "some";

function sliceView(s: EndpointSlice, room: number): SliceView {
  const endpoints = [...(s.endpoints ?? [])].sort((a, b) =>
    (a.addresses[0] ?? "").localeCompare(b.addresses[0] ?? "", "en", { numeric: true }),
  );
  const shown = Math.max(0, Math.min(room, endpoints.length));
  return {
    name: s.metadata?.name ?? "",
    addressType: s.addressType,
    managedBy: s.metadata?.labels?.["endpointslice.kubernetes.io/managed-by"] ?? "",
    ports: (s.ports ?? []).map((p) => `${p.name ? `${p.name} ` : ""}${p.port ?? "*"}/${p.protocol ?? "TCP"}`),
    endpoints: endpoints.slice(0, shown).map(endpointView),
    hiddenEndpoints: endpoints.length - shown,
  };
}

/** Each slice with as many endpoints as the Service's budget has left after the slices before it. */
function slicesWithin(slices: readonly EndpointSlice[], maxEndpoints: number): SliceView[] {
  let room = maxEndpoints;
  return slices.map((s) => {
    const view = sliceView(s, room);
    room -= view.endpoints.length;
    return view;
  });
}

/**
 * Services with their slices and endpoints, by namespace and name. `maxEndpoints` bounds the endpoints listed per
 * Service (a slice-churn Service has thousands; the page lists the first and counts the rest).
 */
export function serviceViews(
  services: readonly Service[],
  slices: readonly EndpointSlice[],
  maxEndpoints = 100,
): Omit<ServiceView, "timeline">[] {
  const byService = new Map<string, EndpointSlice[]>();
  for (const s of slices) {
    const name = s.metadata?.labels?.[serviceNameLabel];
    if (!name) continue;
    const key = `${s.metadata?.namespace}/${name}`;
    byService.set(key, [...(byService.get(key) ?? []), s]);
  }
  return services
    .map((svc) => {
      const namespace = svc.metadata?.namespace ?? "";
      const name = svc.metadata?.name ?? "";
      const own = (byService.get(`${namespace}/${name}`) ?? []).sort((a, b) =>
        (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""),
      );
      const counts = countEndpoints(own);
      return {
        namespace,
        name,
        type: svc.spec?.type ?? "ClusterIP",
        clusterIP: svc.spec?.clusterIP ?? "",
        ports: (svc.spec?.ports ?? []).map(servicePort),
        topology: svc.spec?.trafficDistribution ?? svc.metadata?.annotations?.[topologyModeAnnotation] ?? "",
        internalTrafficPolicy: svc.spec?.internalTrafficPolicy ?? "Cluster",
        counts,
        hints: hintState(counts),
        slices: slicesWithin(own, maxEndpoints),
      };
    })
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
}
