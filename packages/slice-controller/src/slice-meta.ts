import type { Service } from "kubernetes-types/core/v1.js";
import type { OwnerReference } from "kubernetes-types/meta/v1.js";
import { isHeadless } from "./address-family.js";
import { LABEL_HEADLESS, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from "./constants.js";
import type { AddressType, EndpointPort, EndpointSlice } from "./types.js";

const RESERVED_LABEL_KEYS: ReadonlySet<string> = new Set([
  LABEL_SERVICE_NAME,
  LABEL_MANAGED_BY,
  LABEL_HEADLESS,
]);

function withoutReserved(labels: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (!RESERVED_LABEL_KEYS.has(key)) out[key] = value;
  }
  return out;
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && b[k] === a[k]);
}

/**
 * The labels a slice of this Service should carry, and whether the slice's user labels differ from
 * the Service's. Only non-reserved labels are compared: a slice missing just the headless label is
 * not rewritten for that alone.
 */
export function sliceLabels(
  slice: Pick<EndpointSlice, "metadata"> | undefined,
  service: Service,
  controllerName: string,
): { labels: Record<string, string>; changed: boolean } {
  const labels = withoutReserved(service.metadata?.labels);
  const changed = !sameLabels(withoutReserved(slice?.metadata?.labels), labels);
  if (isHeadless(service)) labels[LABEL_HEADLESS] = "";
  labels[LABEL_SERVICE_NAME] = service.metadata?.name ?? "";
  labels[LABEL_MANAGED_BY] = controllerName;
  return { labels, changed };
}

// A DNS-1123 subdomain; generateName is checked with a trailing character appended, as the
// apiserver does, because the random suffix will follow it.
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `<service>-`, unless that would not be a valid name prefix; then the bare Service name. */
export function sliceNamePrefix(serviceName: string): string {
  const prefix = `${serviceName}-`;
  const probe = `${prefix}a`;
  return probe.length <= 253 && DNS1123_SUBDOMAIN.test(probe) ? prefix : serviceName;
}

/** The controller owner reference a slice carries back to its Service. */
export function serviceOwnerReference(service: Service): OwnerReference {
  return {
    apiVersion: "v1",
    kind: "Service",
    name: service.metadata?.name ?? "",
    uid: service.metadata?.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * True when a controller reference of this very Service (not an earlier one of the same name) owns
 * the slice. Slices failing this are deleted instead of reused.
 */
export function ownedBy(slice: EndpointSlice, service: Service): boolean {
  const uid = service.metadata?.uid;
  return (slice.metadata?.ownerReferences ?? []).some(
    (o) => o.uid === uid && o.kind === "Service" && o.apiVersion === "v1",
  );
}

/** A new, empty, unnamed slice for the Service; the apiserver completes generateName. */
export function newEndpointSlice(
  service: Service,
  ports: readonly EndpointPort[],
  addressType: AddressType,
  controllerName: string,
): EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      generateName: sliceNamePrefix(service.metadata?.name ?? ""),
      namespace: service.metadata?.namespace ?? "",
      labels: sliceLabels(undefined, service, controllerName).labels,
      ownerReferences: [serviceOwnerReference(service)],
    },
    addressType,
    endpoints: [],
    ports: ports.map((p) => ({ ...p })),
  };
}
