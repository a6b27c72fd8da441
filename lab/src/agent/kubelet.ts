import { Informer, pods } from "@switchyard/kube";
import type { Pod } from "kubernetes-types/core/v1.js";
import type { PodSource } from "./kubelet-api/container-logs.js";
import { PodWorker, podNetnsPrefix, type WorkerDeps } from "./pod-worker.js";

/**
 * Watches the pods bound to this node and keeps one worker per pod: started when the pod arrives, terminated
 * when its deletionTimestamp appears (graceful) or when it vanishes from the API (forced).
 */
export class Kubelet implements PodSource {
  private readonly workers = new Map<string, PodWorker>();
  private stopWatch: (() => void) | undefined;

  constructor(private readonly d: WorkerDeps) {}

  async run(): Promise<void> {
    const informer = new Informer<Pod>({
      client: this.d.client,
      resource: pods,
      fieldSelector: `spec.nodeName=${this.d.node.name}`,
      logger: this.d.log,
    });
    informer.addEventHandler({
      onAdd: (pod) => this.onChange("upsert", pod),
      onUpdate: (old, pod) => {
        // Keyed by name, the cache can replace a pod with its namesake across a relist: the old one is gone.
        if (old.metadata?.uid !== pod.metadata?.uid) this.onChange("delete", old);
        this.onChange("upsert", pod);
      },
      onDelete: (pod) => this.onChange("delete", pod),
    });
    informer.start();
    this.stopWatch = () => void informer.stop();
    await informer.waitForSync();
  }

  private onChange(type: "upsert" | "delete", pod: Pod): void {
    const uid = pod.metadata?.uid ?? "";
    const worker = this.workers.get(uid);
    const log = (err: Error) =>
      this.d.log.error("pod worker failed", {
        pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`,
        error: err.message,
      });
    if (type === "delete") {
      if (worker) void worker.terminate(0, false).catch(log);
      this.workers.delete(uid);
      return;
    }
    if (pod.metadata?.deletionTimestamp) {
      const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
      if (worker) void worker.terminate(grace, true).catch(log);
      else void new PodWorker(pod, this.d).terminate(0, true).catch(log);
      return;
    }
    if (worker) {
      worker.update(pod);
      return;
    }
    const fresh = new PodWorker(pod, this.d);
    this.workers.set(uid, fresh);
    void fresh.start().catch(log);
  }

  /** The pods this agent runs, as the kubelet API's /pods lists them. */
  pods(): Pod[] {
    return [...this.workers.values()].map((w) => w.object);
  }

  /** By name; the newest worker wins while a deleted pod's namesake still terminates beside its successor. */
  pod(namespace: string, name: string): PodWorker | undefined {
    let found: PodWorker | undefined;
    for (const w of this.workers.values()) {
      const m = w.object.metadata;
      if (m?.namespace === namespace && m.name === name) found = w;
    }
    return found;
  }

  /** Stops watching; pods keep running (a kubelet restart does not kill containers); `down` removes them. */
  stop(): void {
    this.stopWatch?.();
  }
}

/** Pod namespaces a previous run of this node's agent left behind: they belong to no worker now. */
export function leftoverPodNamespaces(netnsList: string, d: Pick<WorkerDeps, "plan" | "node">): string[] {
  const prefix = podNetnsPrefix(d.plan, d.node);
  return netnsList
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter((name) => name.startsWith(prefix));
}
