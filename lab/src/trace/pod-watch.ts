// The pods behind a Service, as a watch delivers them: when each became Ready and when its deletion began,
// timed on arrival (the API keeps condition times in whole seconds only).
import type { HttpRestClient } from "@switchyard/kube";
import type { Pod } from "kubernetes-types/core/v1.js";

export interface PodMoment {
  pod: string;
  ip: string;
  kind: "ready" | "unready" | "deleting";
  /** When the watch delivered it (ms since the epoch). */
  at: number;
  /** The Ready condition's lastTransitionTime, for "ready". */
  readySince?: string;
}

const isReady = (p: Pod) =>
  (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

export class PodWatch {
  readonly moments: PodMoment[] = [];
  private readonly ready = new Set<string>();
  private readonly deleting = new Set<string>();
  private readonly abort = new AbortController();
  private broken: string | undefined;

  private constructor(
    private readonly client: HttpRestClient,
    private readonly path: string,
  ) {}

  /** Watches the pods `selector` picks in `namespace`, from a list (so pods already there are not changes). */
  static async start(client: HttpRestClient, namespace: string, selector: string): Promise<PodWatch> {
    const path = `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`;
    const w = new PodWatch(client, path);
    const list = await client.call<{ metadata: { resourceVersion: string }; items: Pod[] }>("GET", path);
    for (const p of list.items) w.note(p, false);
    void w.run(list.metadata.resourceVersion);
    return w;
  }

  private note(p: Pod, record: boolean): void {
    const name = `${p.metadata?.namespace}/${p.metadata?.name}`;
    const ip = p.status?.podIP ?? "";
    const at = Date.now();
    if (isReady(p) && !this.ready.has(name)) {
      this.ready.add(name);
      const since = p.status?.conditions?.find((c) => c.type === "Ready")?.lastTransitionTime;
      if (record)
        this.moments.push({ pod: name, ip, kind: "ready", at, ...(since ? { readySince: since } : {}) });
    } else if (!isReady(p) && this.ready.has(name)) {
      this.ready.delete(name);
      if (record) this.moments.push({ pod: name, ip, kind: "unready", at });
    }
    if (p.metadata?.deletionTimestamp && !this.deleting.has(name)) {
      this.deleting.add(name);
      if (record) this.moments.push({ pod: name, ip, kind: "deleting", at });
    }
  }

  private async run(from: string): Promise<void> {
    try {
      const opts = { resourceVersion: from, timeoutSeconds: 3600, signal: this.abort.signal };
      for await (const e of await this.client.watchPath<Pod>(this.path, opts))
        if (e.type === "ADDED" || e.type === "MODIFIED") this.note(e.object, true);
    } catch (err) {
      if (!this.abort.signal.aborted) this.broken = (err as Error).message;
    }
  }

  /**
   * What made `ip` an added endpoint (its latest Ready) or a removed one (the first of its deletion or its
   * readiness loss since it was last Ready), seen at or before `by`.
   */
  momentFor(ip: string, kind: "added" | "removed", by: number): PodMoment | undefined {
    if (this.broken) throw new Error(`the pod watch broke: ${this.broken}`);
    const mine = this.moments.filter((m) => m.ip === ip && m.at <= by);
    const lastReady = mine.filter((m) => m.kind === "ready").at(-1);
    if (kind === "added") return lastReady;
    return mine.find((m) => m.kind !== "ready" && m.at >= (lastReady?.at ?? 0));
  }

  stop(): void {
    this.abort.abort();
  }
}
