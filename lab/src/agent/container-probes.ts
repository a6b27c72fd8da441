// A container's three probes on their timers, as the kubelet's prober runs them beside the container: the startup
// probe until the container has started, then liveness and readiness; a failed liveness or startup probe restarts
// the container (probe-worker.ts decides, the pod worker restarts).
import type { Pod } from "kubernetes-types/core/v1.js";
import type { Container } from "./container.js";
import { type ProbeKind, ProbeWorker } from "./probe-worker.js";
import { probeOnce } from "./probes.js";

type PodContainer = NonNullable<Pod["spec"]>["containers"][number];

/** What the probes need from their pod. */
export interface ProbeHost {
  /** The address httpGet, tcpSocket and grpc probes dial; undefined before the sandbox has one. */
  podIp(): string | undefined;
  deleting(): boolean;
  /** Everything has stopped: no more probing. */
  stopped(): boolean;
  /** A result changed: the status may have. */
  changed(): void;
  /** A liveness or startup probe failed: end this instance so its restart policy takes over. */
  restart(kind: ProbeKind, graceSeconds: number | undefined): void;
  warn(message: string): void;
}

export class ContainerProbes {
  readonly workers: ProbeWorker[];
  private startedOnce: () => void = () => {};
  /** Resolves the first time the container counts as started (a sidecar's turn to let the next one start). */
  readonly started: Promise<void> = new Promise((resolve) => {
    this.startedOnce = resolve;
  });

  constructor(
    private readonly spec: PodContainer,
    private readonly c: Container,
    private readonly host: ProbeHost,
  ) {
    const probes: [ProbeKind, PodContainer["readinessProbe"]][] = [
      ["startup", spec.startupProbe],
      ["liveness", spec.livenessProbe],
      ["readiness", spec.readinessProbe],
    ];
    this.workers = probes.flatMap(([kind, probe]) => (probe ? [new ProbeWorker(kind, probe)] : []));
  }

  private worker(kind: ProbeKind): ProbeWorker | undefined {
    return this.workers.find((w) => w.kind === kind);
  }

  /** Running, and past its startup probe if it has one. */
  get isStarted(): boolean {
    const startup = this.worker("startup");
    return this.c.running && (startup ? startup.resultFor(this.c.restartCount) === true : true);
  }

  /** Started, and passing its readiness probe if it has one. */
  get ready(): boolean {
    const readiness = this.worker("readiness");
    return this.isStarted && (readiness ? readiness.resultFor(this.c.restartCount) === true : true);
  }

  /**
   * The results an adopted container's running instance had, as the pod's status last showed them (ready,
   * started), kept until it is probed; seeded before the container is adopted, whose first status post shows them.
   */
  resume(instance: number, shown: { ready: boolean; started?: boolean }): void {
    if (shown.started) this.worker("startup")?.seed(instance, true);
    if (shown.ready) this.worker("readiness")?.seed(instance, true);
  }

  /** Resolves `started` once the container counts as started; call after each start and each result. */
  noteStarted(): void {
    if (this.isStarted) this.startedOnce();
  }

  /** Each probe's first tick after its initialDelaySeconds, then one per periodSeconds; the timers go to `timers`. */
  schedule(timers: NodeJS.Timeout[]): void {
    for (const w of this.workers) {
      let busy = false;
      const tick = async () => {
        if (busy || this.host.stopped()) return;
        busy = true;
        try {
          await this.tick(w);
        } finally {
          busy = false;
        }
      };
      const first = setTimeout(
        () => {
          void tick();
          timers.push(setInterval(() => void tick(), (w.probe.periodSeconds ?? 10) * 1000));
        },
        (w.probe.initialDelaySeconds ?? 0) * 1000,
      );
      timers.push(first);
    }
  }

  private async tick(w: ProbeWorker): Promise<void> {
    const ip = this.host.podIp();
    if (!ip) return;
    const instance = this.c.restartCount;
    const before = w.resultFor(instance);
    const target = {
      instance,
      running: this.c.running,
      startedAtMs: this.c.startedAtMs,
      started: this.isStarted,
      deleting: this.host.deleting(),
    };
    if (!w.due(target, Date.now())) {
      if (w.result !== before) this.host.changed();
      return;
    }
    const outcome = await probeOnce(w.probe, ip, this.spec, this.c.pid);
    if (outcome === "unsupported") this.host.warn("probe type not supported, counted as passing");
    // The instance it probed is gone: its verdict is not the new one's.
    if (this.c.restartCount !== instance) return;
    const action = w.record(outcome);
    if (action === "restart") this.host.restart(w.kind, w.probe.terminationGracePeriodSeconds);
    this.noteStarted();
    if (action) this.host.changed();
  }
}
