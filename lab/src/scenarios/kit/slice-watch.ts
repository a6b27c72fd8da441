import { type HttpRestClient, realClock, sleep } from "@switchyard/kube";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

/** One write of a slice as a watcher (a node's proxy) receives it. */
export interface SliceEvent {
  type: "ADDED" | "MODIFIED" | "DELETED";
  name: string;
  service: string;
  at: number;
  slice: EndpointSlice;
}

/** Writes counted over a stretch of events. */
export interface WriteCount {
  added: number;
  modified: number;
  deleted: number;
  /** Distinct slices written. */
  slices: Set<string>;
}

/**
 * Every EndpointSlice write in a namespace, from the moment `start` returns: what each node's proxy is sent. The
 * watch starts at the list's resourceVersion, so nothing between the list and the watch is missed.
 */
export class SliceWatch {
  readonly events: SliceEvent[] = [];
  private broken: string | undefined;
  private readonly abort = new AbortController();

  private constructor(
    private readonly client: HttpRestClient,
    private readonly path: string,
  ) {}

  static async start(client: HttpRestClient, namespace: string): Promise<SliceWatch> {
    const w = new SliceWatch(client, `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`);
    const list = await client.call<{ metadata: { resourceVersion: string } }>("GET", w.path);
    void w.run(list.metadata.resourceVersion);
    return w;
  }

  private async run(from: string): Promise<void> {
    let rv = from;
    while (!this.abort.signal.aborted) {
      try {
        const opts = { resourceVersion: rv, timeoutSeconds: 300, signal: this.abort.signal };
        for await (const e of await this.client.watchPath<EndpointSlice>(this.path, opts)) {
          rv = e.object.metadata?.resourceVersion ?? rv;
          if (e.type !== "ADDED" && e.type !== "MODIFIED" && e.type !== "DELETED") continue;
          this.events.push({
            type: e.type,
            name: e.object.metadata?.name ?? "",
            service: e.object.metadata?.labels?.["kubernetes.io/service-name"] ?? "",
            at: Date.now(),
            slice: e.object,
          });
        }
      } catch (err) {
        // A gap would make the counts wrong: remember it, and say so at the next count, rather than resume silently.
        if (!this.abort.signal.aborted) this.broken = (err as Error).message;
        return;
      }
    }
  }

  /** A position in the event list, to count from. */
  mark(): number {
    return this.events.length;
  }

  count(from: number, service?: string, to = this.events.length): WriteCount {
    if (this.broken) throw new Error(`the EndpointSlice watch broke: ${this.broken}`);
    const c: WriteCount = { added: 0, modified: 0, deleted: 0, slices: new Set() };
    for (const e of this.events.slice(from, to)) {
      if (service !== undefined && e.service !== service) continue;
      if (e.type === "ADDED") c.added++;
      else if (e.type === "MODIFIED") c.modified++;
      else c.deleted++;
      c.slices.add(e.name);
    }
    return c;
  }

  /** Waits until `ready` holds and no slice was written for `quietMs` (the controller has settled). */
  async settle(ready: () => Promise<boolean>, quietMs: number, deadline: number): Promise<void> {
    for (;;) {
      if (this.broken) throw new Error(`the EndpointSlice watch broke: ${this.broken}`);
      const last = this.events.at(-1)?.at ?? 0;
      if (Date.now() - last >= quietMs && (await ready())) return;
      if (Date.now() > deadline) throw new Error("timed out waiting for the EndpointSlices to settle");
      await sleep(realClock, 200);
    }
  }

  stop(): void {
    this.abort.abort();
  }
}

export const writes = (c: WriteCount) => c.added + c.modified + c.deleted;

export const formatWrites = (c: WriteCount) =>
  `${writes(c)} write(s) to ${c.slices.size} slice(s): ${c.added} created, ${c.modified} updated, ${c.deleted} deleted`;
