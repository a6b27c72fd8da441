import type { Namespace, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { ObjectMeta } from "kubernetes-types/meta/v1.js";
import { SERVICE_NAME_LABEL } from "../cluster-view.js";

/** The annotation the EndpointSlice controller stamps with the time of the change that caused the write. */
export const TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time";

/*
 * The cache keeps only what answers need, as CoreDNS's object package does: a cluster with many pods
 * and slices would otherwise hold every managedFields entry and container spec in memory. Whatever a
 * new answer needs must be added here first, or it will silently be missing from the cache.
 */

function meta(m: ObjectMeta | undefined, extra: Partial<ObjectMeta> = {}): ObjectMeta {
  return {
    ...extra,
    ...(m?.name === undefined ? {} : { name: m.name }),
    ...(m?.namespace === undefined ? {} : { namespace: m.namespace }),
    // The informer compares resourceVersions to skip replayed events.
    ...(m?.resourceVersion === undefined ? {} : { resourceVersion: m.resourceVersion }),
  };
}

export function slimService(svc: Service): Service {
  const spec = svc.spec ?? {};
  const out: Service = { metadata: meta(svc.metadata), spec: {} };
  const s = out.spec as NonNullable<Service["spec"]>;
  if (spec.type !== undefined) s.type = spec.type;
  if (spec.clusterIP !== undefined) s.clusterIP = spec.clusterIP;
  if (spec.clusterIPs !== undefined) s.clusterIPs = [...spec.clusterIPs];
  if (spec.externalName !== undefined) s.externalName = spec.externalName;
  if (spec.ports !== undefined)
    s.ports = spec.ports.map((p) => ({
      port: p.port,
      ...(p.name === undefined ? {} : { name: p.name }),
      ...(p.protocol === undefined ? {} : { protocol: p.protocol }),
    }));
  return out;
}

/**
 * Keeps the service-name label, the trigger-time annotation, the ports, and only the endpoints DNS
 * serves (ready true or unset; serving and terminating are ignored, as in CoreDNS), so that the
 * by-IP index never finds an address that is not answered.
 */
export function slimEndpointSlice(slice: EndpointSlice): EndpointSlice {
  const service = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
  const trigger = slice.metadata?.annotations?.[TRIGGER_TIME_ANNOTATION];
  const extra: Partial<ObjectMeta> = {};
  if (service !== undefined) extra.labels = { [SERVICE_NAME_LABEL]: service };
  if (trigger !== undefined) extra.annotations = { [TRIGGER_TIME_ANNOTATION]: trigger };
  const out: EndpointSlice = {
    addressType: slice.addressType,
    metadata: meta(slice.metadata, extra),
    endpoints: [],
  };
  if (slice.ports !== undefined)
    out.ports = slice.ports.map((p) => ({
      ...(p.name === undefined ? {} : { name: p.name }),
      ...(p.port === undefined ? {} : { port: p.port }),
      ...(p.protocol === undefined ? {} : { protocol: p.protocol }),
    }));
  for (const ep of slice.endpoints ?? []) {
    if (ep.conditions?.ready === false) continue;
    const kept: EndpointSlice["endpoints"][number] = { addresses: [...ep.addresses] };
    if (ep.hostname !== undefined) kept.hostname = ep.hostname;
    // Pod names of 64 characters or more can never be a label, so they are not worth keeping.
    const pod = ep.targetRef?.name;
    if (pod !== undefined && pod.length < 64) kept.targetRef = { name: pod };
    out.endpoints.push(kept);
  }
  return out;
}

/** A terminating pod keeps no addresses, so `pods verified` stops answering for it at once (as CoreDNS). */
export function slimPod(pod: Pod): Pod {
  const metadata = meta(pod.metadata);
  if (pod.metadata?.deletionTimestamp) return { metadata };
  const ips = pod.status?.podIPs;
  return {
    metadata,
    status: {
      ...(pod.status?.podIP === undefined ? {} : { podIP: pod.status.podIP }),
      ...(ips === undefined
        ? {}
        : { podIPs: ips.map((a) => ({ ...(a.ip === undefined ? {} : { ip: a.ip }) })) }),
    },
  };
}

export function slimNamespace(ns: Namespace): Namespace {
  return { metadata: meta(ns.metadata) };
}
