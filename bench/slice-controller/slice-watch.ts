// Everything the benchmark knows about a controller's output comes from one watch per namespace on
// EndpointSlices: the live slices, every write (ADDED/MODIFIED/DELETED) with its size, and when the
// last one arrived. Settling means "done, and no write for a quiet period".

import { type Api, SLICES, type Watch } from "@switchyard/testbed";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

const MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
const CONTROLLER = "endpointslice-controller.k8s.io";

export interface SliceWrite {
  type: "ADDED" | "MODIFIED" | "DELETED";
  name: string;
  /** The slice as JSON, as the watch served it (what every watcher of slices receives). */
  bytes: number;
  /** The same without metadata.managedFields (what an informer that strips them keeps). */
  bytesWithoutManagedFields: number;
  at: number;
}

export interface WriteTally {
  create: number;
  update: number;
  delete: number;
  total: number;
}

interface List {
  metadata: { resourceVersion: string };
  items: EndpointSlice[];
}

export const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

function withoutManagedFields(slice: EndpointSlice): EndpointSlice {
  const { managedFields: _, ...metadata } = slice.metadata ?? {};
  return { ...slice, metadata };
}

export class SliceWatch {
  /** Managed slices by name, as of the last event. */
  readonly slices = new Map<string, EndpointSlice>();
  readonly writes: SliceWrite[] = [];
  lastEventAt = performance.now();
  #watch: Watch | undefined;

  static async open(api: Api, namespace: string): Promise<SliceWatch> {
    const w = new SliceWatch();
    const path = `${SLICES}/namespaces/${namespace}/endpointslices`;
    const list = await api.get<List>(path);
    for (const s of list.items) w.#apply("ADDED", s, false);
    w.#watch = await api.watch<EndpointSlice>(path, list.metadata.resourceVersion, (event) => {
      if (event.type === "ADDED" || event.type === "MODIFIED" || event.type === "DELETED")
        w.#apply(event.type, event.object, true);
    });
    return w;
  }

  #apply(type: SliceWrite["type"], slice: EndpointSlice, record: boolean): void {
    const name = slice.metadata?.name ?? "";
    if (slice.metadata?.labels?.[MANAGED_BY] !== CONTROLLER) return;
    if (type === "DELETED") this.slices.delete(name);
    else this.slices.set(name, slice);
    if (!record) return;
    this.lastEventAt = performance.now();
    this.writes.push({
      type,
      name,
      bytes: jsonBytes(slice),
      bytesWithoutManagedFields: jsonBytes(withoutManagedFields(slice)),
      at: this.lastEventAt,
    });
  }

  /** The writes seen since `from` (an index into `writes`, taken with `mark()`). */
  since(from: number): SliceWrite[] {
    return this.writes.slice(from);
  }

  mark(): number {
    return this.writes.length;
  }

  tally(from: number): WriteTally {
    const ws = this.since(from);
    const n = (t: SliceWrite["type"]) => ws.filter((w) => w.type === t).length;
    return { create: n("ADDED"), update: n("MODIFIED"), delete: n("DELETED"), total: ws.length };
  }

  /** Slices of one Service. */
  of(service: string): EndpointSlice[] {
    return [...this.slices.values()].filter(
      (s) => s.metadata?.labels?.["kubernetes.io/service-name"] === service,
    );
  }

  /**
   * Resolves with the time of the last write once `done()` holds and no write arrived for
   * `quietMs`. Upstream requeues a Service a second after its own writes, so the quiet period is
   * longer than that.
   */
  async settle(
    done: () => boolean,
    { quietMs = 3000, timeoutMs = 300_000, what = "slices" } = {},
  ): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      if (performance.now() - this.lastEventAt >= quietMs && done()) return this.lastEventAt;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${what} did not settle within ${timeoutMs / 1000} s`);
  }

  stop(): void {
    this.#watch?.stop();
  }
}

export const endpointsOf = (slices: readonly EndpointSlice[]) => slices.flatMap((s) => s.endpoints ?? []);

export const readyCount = (slices: readonly EndpointSlice[]) =>
  endpointsOf(slices).filter((e) => e.conditions?.ready === true).length;
