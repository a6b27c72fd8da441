// One probe of one container as the kubelet's prober worker judges it (pkg/kubelet/prober/worker.go): a result per
// container instance that starts at the kind's initial value, moves only after failureThreshold failures or
// successThreshold successes in a row, and, once a liveness probe has failed or a startup probe has decided, holds
// until the container's next instance. A startup probe runs until the container has started; the others only after.
import type { Probe } from "kubernetes-types/core/v1.js";
import type { ProbeResult } from "./probes.js";

export type ProbeKind = "readiness" | "liveness" | "startup";

/** What a worker needs to know of its container at a tick. */
export interface ProbeTarget {
  /** The instance (restartCount): a new one resets the result. */
  instance: number;
  running: boolean;
  /** When this instance started, ms since the epoch. */
  startedAtMs: number;
  /** Whether the container counts as started (its startup probe passed, or it has none). */
  started: boolean;
  /** The pod is being deleted: liveness and startup count as passing and stop. */
  deleting: boolean;
}

/** What a decided result asks of the agent: restart the container (a failed liveness or startup probe). */
export type ProbeAction = "restart" | "changed" | undefined;

/** The results manager's initial value per kind: not ready, alive, not yet started. */
const initial: Record<ProbeKind, boolean | undefined> = {
  readiness: false,
  liveness: true,
  startup: undefined,
};

export class ProbeWorker {
  /** The current result: true passing, false failing, undefined not decided (a startup probe at first). */
  result: boolean | undefined;
  private instance = -1;
  private onHold = false;
  private last: boolean | undefined;
  private run = 0;

  constructor(
    readonly kind: ProbeKind,
    readonly probe: Probe,
  ) {
    this.result = initial[kind];
  }

  /** The result for one instance of the container: a newer instance than the worker has seen starts afresh. */
  resultFor(instance: number): boolean | undefined {
    return instance === this.instance ? this.result : initial[this.kind];
  }

  /**
   * The result a previous agent had reached for this instance, as the kubelet's worker keeps a container that was
   * running before the kubelet restarted from turning not ready (a decided startup probe holds, as decided ones do).
   */
  seed(instance: number, result: boolean): void {
    this.instance = instance;
    this.result = result;
    this.onHold = this.kind === "startup";
  }

  /** Whether to probe at this tick; also takes in a new instance or a stopped container. */
  due(t: ProbeTarget, nowMs: number): boolean {
    if (t.instance !== this.instance) {
      this.instance = t.instance;
      this.result = initial[this.kind];
      this.onHold = false;
      this.run = 0;
      this.last = undefined;
    }
    if (this.onHold) return false;
    if (!t.running) {
      this.result = false;
      return false;
    }
    if (t.deleting && this.kind !== "readiness") {
      this.result = true;
      return false;
    }
    if (nowMs - t.startedAtMs < (this.probe.initialDelaySeconds ?? 0) * 1000) return false;
    return this.kind === "startup" ? !t.started : t.started;
  }

  /** One probe's outcome; an unsupported probe counts as passing (the agent says so where it runs). */
  record(outcome: ProbeResult): ProbeAction {
    const passed = outcome !== "failure";
    if (passed === this.last) this.run++;
    else {
      this.last = passed;
      this.run = 1;
    }
    const threshold = passed ? (this.probe.successThreshold ?? 1) : (this.probe.failureThreshold ?? 3);
    if (this.run < threshold) return undefined;
    const before = this.result;
    this.result = passed;
    if ((this.kind === "liveness" && !passed) || this.kind === "startup") {
      this.onHold = true;
      this.run = 0;
    }
    if (!passed && this.kind !== "readiness") return "restart";
    return before !== passed ? "changed" : undefined;
  }
}
