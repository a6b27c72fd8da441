import type { Endpoints, Pod } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { SliceEvent } from "../kit/slice-watch.js";

/** Bytes of an object as JSON: what a watcher is sent per write (JSON; protobuf clients get less). */
export const jsonBytes = (o: unknown) => Buffer.byteLength(JSON.stringify(o));

export const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** Endpoints per slice, fullest first. */
export const fills = (slices: readonly EndpointSlice[]) =>
  slices.map((s) => (s.endpoints ?? []).length).sort((a, b) => b - a);

/** "50 slices, 5000 endpoints, 100 per slice (fill 100%)" or with the spread when they differ. */
export function describeFill(slices: readonly EndpointSlice[], maxPerSlice: number): string {
  const f = fills(slices);
  const total = f.reduce((a, b) => a + b, 0);
  if (f.length === 0) return "0 slices";
  const mean = total / f.length;
  const fill = `${Math.round((mean / maxPerSlice) * 100)}%`;
  const spread =
    f[0] === f.at(-1) ? `${f[0]} per slice` : `per slice ${f.at(-1)}..${f[0]} (${histogram(f, maxPerSlice)})`;
  return `${f.length} slices, ${total} endpoints, ${spread}, mean fill ${fill} of ${maxPerSlice}`;
}

/** Slices by fill, in tenths of the maximum: "10×100%, 3×70-79%". */
function histogram(f: readonly number[], max: number): string {
  const buckets = new Map<string, number>();
  for (const n of f) {
    const pct = Math.floor((n / max) * 100);
    const key = pct >= 100 ? "100%" : `${Math.floor(pct / 10) * 10}-${Math.floor(pct / 10) * 10 + 9}%`;
    buckets.set(key, (buckets.get(key) ?? 0) + 1);
  }
  return [...buckets].map(([k, n]) => `${n}×${k}`).join(", ");
}

/** Slices per port set: the controller cuts slices per (Service, port set, address family). */
export function slicesByPortSet(
  slices: readonly EndpointSlice[],
): Map<string, { slices: number; endpoints: number }> {
  const out = new Map<string, { slices: number; endpoints: number }>();
  for (const s of slices) {
    const key = `${s.addressType} ${(s.ports ?? []).map((p) => `${p.name || "-"}:${p.port}/${p.protocol ?? "TCP"}`).join(",")}`;
    const e = out.get(key) ?? { slices: 0, endpoints: 0 };
    e.slices++;
    e.endpoints += (s.endpoints ?? []).length;
    out.set(key, e);
  }
  return out;
}

/** resourceVersion by slice name, to tell written slices from untouched ones. */
export const versions = (slices: readonly EndpointSlice[]) =>
  new Map(slices.map((s) => [s.metadata?.name ?? "", s.metadata?.resourceVersion ?? ""]));

/** Slices whose resourceVersion is the same in both snapshots. */
export function untouched(before: Map<string, string>, after: Map<string, string>): number {
  let n = 0;
  for (const [name, rv] of after) if (before.get(name) === rv) n++;
  return n;
}

/**
 * The Endpoints object the endpoints controller would write for these pods with no cap: one subset, every ready
 * address with its node and pod reference, as v1.Endpoints has them. The real controller stops at 1000 addresses
 * (since v1.22, annotating `endpoints.kubernetes.io/over-capacity: truncated`); this is the object before that cap.
 */
export function uncappedEndpoints(
  namespace: string,
  name: string,
  pods: readonly Pod[],
  port: number,
): Endpoints {
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name, namespace, labels: { "endpoints.kubernetes.io/managed-by": "endpoint-controller" } },
    subsets: [
      {
        addresses: pods.map((p) => ({
          ip: p.status?.podIP ?? "",
          nodeName: p.spec?.nodeName ?? "",
          targetRef: {
            kind: "Pod",
            namespace,
            name: p.metadata?.name ?? "",
            uid: p.metadata?.uid ?? "",
          },
        })),
        ports: [{ port, protocol: "TCP" }],
      },
    ],
  };
}

/** A deterministic sample of `k` of `n` indices (a fixed-seed shuffle), so runs delete the same pods. */
export function sample(n: number, k: number, seed = 1): number[] {
  const idx = Array.from({ length: n }, (_, i) => i);
  let s = seed;
  const rand = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [idx[i], idx[j]] = [idx[j] as number, idx[i] as number];
  }
  return idx.slice(0, k).sort((a, b) => a - b);
}

/**
 * The slices of `service` deleted while the `doomed` pods were deleted, split by why: one whose every endpoint's pod was deleted is emptied (the
 * controller deletes an empty slice, as upstream's reconciler does); one deleted while some of its pods lived on was
 * merged into another slice, which is what C2 says does not happen.
 */
export function deletedOnScaleDown(
  before: EndpointSlice[],
  events: SliceEvent[],
  service: string,
  doomed: Set<string>,
): { emptied: number; merged: number } {
  const deleted = new Set(
    events.filter((e) => e.type === "DELETED" && e.service === service).map((e) => e.name),
  );
  let emptied = 0;
  for (const s of before) {
    if (!deleted.has(s.metadata?.name ?? "")) continue;
    const pods = (s.endpoints ?? []).map((e) => e.targetRef?.name ?? "");
    if (pods.every((n) => doomed.has(n))) emptied++;
  }
  return { emptied, merged: deleted.size - emptied };
}
