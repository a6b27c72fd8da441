// Waiting for upstream's controller to settle, and counting what it wrote meanwhile.
import { setTimeout as sleep } from "node:timers/promises";
import { type Api, listSlices, SLICES, sliceCollectionVersion, type Watch } from "@switchyard/testbed";
import type { EndpointSlice } from "../../src/index.js";

export interface WriteCounts {
  create: number;
  update: number;
  delete: number;
}

export interface WriteCounter {
  counts(): WriteCounts;
  stop(): void;
}

/** Counts every EndpointSlice write in the namespace from now on, as a watch sees them. */
export async function countSliceWrites(api: Api, namespace: string): Promise<WriteCounter> {
  const counts: WriteCounts = { create: 0, update: 0, delete: 0 };
  const from = await sliceCollectionVersion(api, namespace);
  const watch: Watch = await api.watch<EndpointSlice>(
    `${SLICES}/namespaces/${namespace}/endpointslices`,
    from,
    (event) => {
      if (event.type === "ADDED") counts.create++;
      else if (event.type === "MODIFIED") counts.update++;
      else if (event.type === "DELETED") counts.delete++;
    },
  );
  return { counts: () => ({ ...counts }), stop: () => watch.stop() };
}

const fingerprint = (slices: readonly EndpointSlice[]) =>
  slices
    .map((s) => `${s.metadata?.name}@${s.metadata?.resourceVersion}`)
    .sort()
    .join(",");

/**
 * Waits until the Service's slices satisfy `done` and then stay untouched for `quietMs` (upstream
 * requeues a Service a second after its own slice writes, so a shorter quiet period could stop
 * between two syncs). Returns the settled slices.
 */
export async function settledSlices(
  api: Api,
  namespace: string,
  service: string,
  done: (slices: readonly EndpointSlice[]) => boolean,
  { quietMs = 2500, timeoutMs = 120_000 } = {},
): Promise<EndpointSlice[]> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  let since = Date.now();
  let latest: EndpointSlice[] = [];
  while (Date.now() < deadline) {
    const { slices } = await listSlices(api, namespace, service);
    latest = slices;
    const now = fingerprint(slices);
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (done(slices) && Date.now() - since >= quietMs) {
      return slices;
    }
    await sleep(250);
  }
  const summary = latest.map((s) => `${s.metadata?.name}: ${s.endpoints.length} endpoints`).join("; ");
  throw new Error(`slices of ${namespace}/${service} did not settle: ${summary || "none"}`);
}

export const totalEndpoints = (slices: readonly EndpointSlice[]) =>
  slices.reduce((n, s) => n + s.endpoints.length, 0);
