import { Informer, pods } from "@switchyard/kube";
import type { Pod } from "kubernetes-types/core/v1.js";
import type { PodSource } from "./kubelet-api/container-logs.js";
import { removeLeftovers } from "./leftover-pods.js";
import { PodWorker, type WorkerDeps } from "./pod-worker.js";
import { readSandboxRecords, type SandboxRecord } from "./runtime-record.js";

/**
 * Watches the pods bound to this node and keeps one worker per pod: started when the pod arrives, terminated
 * when its deletionTimestamp appears (graceful) or when it vanishes from the API (forced). A pod the node's
 * previous agent ran is adopted, its containers going on as they were; what that agent left and no pod claims
 * any more is removed once the first list is in.
 */
export class Kubelet implements PodSource {
  private readonly workers = new Map<string, PodWorker>();
  private stopWatch: (() => void) | undefined;
  /** The previous agent's sandboxes not adopted yet, by pod uid (runtime-record.ts). */
  private unclaimed = new Map<string, SandboxRecord>();

  constructor(private readonly d: WorkerDeps) {}

  async run(): Promise<void> {
    this.unclaimed = readSandboxRecords(this.d.podsDir, this.d.node.name);
    // Their addresses are taken before any new pod asks for one.
    for (const r of this.unclaimed.values())
      if (r.netns !== this.d.node.netns)
        for (const ip of r.podIps) for (const ipam of this.d.ipams) ipam.reserve(ip);
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
    const left = [...this.unclaimed.values()];
    this.unclaimed.clear();
    const owned = new Set([...this.workers.values()].flatMap((w) => w.podNetns ?? []));
    await removeLeftovers(left, owned, this.d);
  }

  /** The sandbox the previous agent left for this pod, taken out of the unclaimed ones. */
  private claim(uid: string): SandboxRecord | undefined {
    const record = this.unclaimed.get(uid);
    this.unclaimed.delete(uid);
    return record;
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
      else {
        // Deleted while no agent ran: a sandbox left for it is taken over, so that its containers stop as they should.
        const adopted = this.claim(uid);
        const ending = new PodWorker(pod, this.d);
        if (adopted) {
          this.workers.set(uid, ending);
          void ending
            .start(adopted)
            .then(() => ending.terminate(grace, true))
            .catch(log);
        } else void ending.terminate(0, true).catch(log);
      }
      return;
    }
    if (worker) {
      worker.update(pod);
      return;
    }
    const fresh = new PodWorker(pod, this.d);
    this.workers.set(uid, fresh);
    void fresh.start(this.claim(uid)).catch(log);
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
