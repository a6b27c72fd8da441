import { type HttpRestClient, realClock, sleep } from "@switchyard/kube";
import type { Pod } from "kubernetes-types/core/v1.js";
import type { Exec } from "../../exec.js";
import { nodeRules, sendsTo } from "../kit/rules.js";
import type { LabNode } from "../kit/scenario-lab.js";

/** One deleted pod: when its deletion was seen, and per node how long until that node's rules dropped it. */
export interface Propagation {
  pod: string;
  ip: string;
  /** When the watch delivered the deletion (ms since the epoch). */
  deletedAt: number;
  /** Milliseconds from the deletion (seen on a watch) to the node's rules no longer sending to the pod. */
  byNode: Record<string, number>;
}

/**
 * Watches a set of pods for deletion and, for each deleted pod, polls every node's rules until none sends to
 * it any more. The deletion time is when the watch delivers it (the apiserver's deletionTimestamp is the
 * deletion plus the grace period, so it cannot serve); the end is the first poll without the pod. The
 * resolution is one round of rule dumps on every node (printed with the result).
 */
export class PropagationWatch {
  private readonly tracked: { pod: string; ip: string; at: number; byNode: Record<string, number> }[] = [];
  private readonly abort = new AbortController();
  private rounds = 0;
  private roundMsTotal = 0;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly client: HttpRestClient,
    private readonly exec: Exec,
    private readonly nodes: readonly LabNode[],
    private readonly ns: string,
    private readonly selector: string,
  ) {}

  async start(): Promise<void> {
    const path = `/api/v1/namespaces/${this.ns}/pods?labelSelector=${encodeURIComponent(this.selector)}`;
    const list = await this.client.call<{ metadata: { resourceVersion: string } }>("GET", path);
    this.loops = [this.watch(path, list.metadata.resourceVersion), this.poll()];
  }

  /** Stops once every deleted pod is gone from every node's rules (or at the deadline), returns the results. */
  async stop(deadline: number): Promise<{ results: Propagation[]; resolutionMs: number }> {
    while (
      Date.now() < deadline &&
      this.tracked.some((t) => Object.keys(t.byNode).length < this.nodes.length)
    )
      await sleep(realClock, 200);
    this.abort.abort();
    await Promise.allSettled(this.loops);
    return {
      results: this.tracked.map(({ pod, ip, at, byNode }) => ({ pod, ip, deletedAt: at, byNode })),
      resolutionMs: this.rounds ? this.roundMsTotal / this.rounds : 0,
    };
  }

  private async watch(path: string, rv: string): Promise<void> {
    try {
      const opts = { resourceVersion: rv, timeoutSeconds: 300, signal: this.abort.signal };
      for await (const ev of await this.client.watchPath<Pod>(path, opts)) {
        const p = ev.object;
        const name = p.metadata?.name ?? "";
        const ip = p.status?.podIP;
        if (!p.metadata?.deletionTimestamp || !ip || this.tracked.some((t) => t.pod === name)) continue;
        this.tracked.push({ pod: name, ip, at: Date.now(), byNode: {} });
      }
    } catch (err) {
      if (!this.abort.signal.aborted) throw err;
    }
  }

  private async poll(): Promise<void> {
    while (!this.abort.signal.aborted) {
      const open = this.tracked.filter((t) => Object.keys(t.byNode).length < this.nodes.length);
      if (open.length === 0) {
        await sleep(realClock, 50);
        continue;
      }
      const t0 = Date.now();
      await Promise.all(
        this.nodes.map(async (n) => {
          const rules = await nodeRules(this.exec, n.run);
          const now = Date.now();
          for (const t of open)
            if (t.byNode[n.name] === undefined && !sendsTo(rules, t.ip)) t.byNode[n.name] = now - t.at;
        }),
      );
      this.rounds++;
      this.roundMsTotal += Date.now() - t0;
    }
  }
}
