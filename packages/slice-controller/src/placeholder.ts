import type { OwnerReference } from "kubernetes-types/meta/v1.js";
import type { EndpointSlice } from "./types.js";

function sameOwnerReference(a: OwnerReference, b: OwnerReference): boolean {
  return (
    a.apiVersion === b.apiVersion &&
    a.kind === b.kind &&
    a.name === b.name &&
    a.uid === b.uid &&
    (a.controller ?? undefined) === (b.controller ?? undefined) &&
    (a.blockOwnerDeletion ?? undefined) === (b.blockOwnerDeletion ?? undefined)
  );
}

// Upstream compares label maps by lookup, so a label set to "" equals one that is absent.
function sameLabelsByLookup(a: Record<string, string> = {}, b: Record<string, string> = {}): boolean {
  return (
    Object.entries(a).every(([k, v]) => (b[k] ?? "") === v) &&
    Object.entries(b).every(([k, v]) => (a[k] ?? "") === v)
  );
}

/**
 * Whether an existing slice is already the placeholder the controller would create, so it can stay
 * instead of being deleted and recreated. Only namespace, labels, owner references, address type
 * and the (empty) endpoints and ports matter; name, annotations and resourceVersion do not.
 */
export function isSamePlaceholder(existing: EndpointSlice, placeholder: EndpointSlice): boolean {
  const ownersA = existing.metadata?.ownerReferences ?? [];
  const ownersB = placeholder.metadata?.ownerReferences ?? [];
  return (
    (existing.metadata?.namespace ?? "") === (placeholder.metadata?.namespace ?? "") &&
    sameLabelsByLookup(existing.metadata?.labels, placeholder.metadata?.labels) &&
    ownersA.length === ownersB.length &&
    ownersA.every((o, i) => {
      const other = ownersB[i];
      return other !== undefined && sameOwnerReference(o, other);
    }) &&
    existing.addressType === placeholder.addressType &&
    existing.endpoints.length === 0 &&
    placeholder.endpoints.length === 0 &&
    (existing.ports ?? []).length === 0 &&
    (placeholder.ports ?? []).length === 0
  );
}
