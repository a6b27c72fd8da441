// Runs the sync function often enough but not too often, like kube-proxy's
// BoundedFrequencyRunner (pkg/proxy/runner since 1.34):
//  - at most one run at a time; run() requests made meanwhile coalesce into one more run;
//  - at least minInterval from the end of one run to the start of the next;
//  - a failed run is retried after retryInterval (sooner if something else triggers a run);
//  - a run at least every maxInterval even if nobody asks.
import { backgroundClock, type Clock, type TimerHandle } from "@switchyard/kube";
import { DEFAULT_MIN_SYNC_PERIOD_MS, DEFAULT_SYNC_PERIOD_MS, FULL_SYNC_PERIOD_MS } from "./sync-periods.js";

export interface BoundedFrequencyRunnerOptions {
  readonly name: string;
  /** The work; a rejection counts as a failure and schedules a retry. */
  readonly fn: () => Promise<void>;
  readonly minIntervalMs: number;
  readonly retryIntervalMs: number;
  readonly maxIntervalMs: number;
  /** Timers; @switchyard/kube's backgroundClock (a pending run does not keep a process alive) by default. */
  readonly clock?: Clock;
  /** Told about each failure (the runner itself never throws). */
  readonly onError?: (err: unknown) => void;
}

type Phase = "stopped" | "idle" | "running" | "cooling";

export class BoundedFrequencyRunner {
  readonly name: string;
  readonly #o: BoundedFrequencyRunnerOptions;
  readonly #clock: Clock;
  #phase: Phase = "stopped";
  #requested = false;
  #minTimer: TimerHandle;
  #maxTimer: TimerHandle;
  #retryTimer: TimerHandle;
  #current: Promise<void> | null = null;

  constructor(options: BoundedFrequencyRunnerOptions) {
    if (options.maxIntervalMs < options.minIntervalMs) {
      throw new Error(`${options.name}: maxInterval must be >= minInterval`);
    }
    this.name = options.name;
    this.#o = options;
    this.#clock = options.clock ?? backgroundClock;
  }

  /** Starts the loop. A run() requested before start is honoured now. */
  start(): void {
    if (this.#phase !== "stopped") return;
    this.#phase = "idle";
    this.#maxTimer = this.#clock.setTimeout(() => this.run(), this.#o.maxIntervalMs);
    if (this.#requested) this.#startRun();
  }

  /** Asks for a run as soon as the bounds allow; repeated requests coalesce. */
  run(): void {
    this.#requested = true;
    if (this.#phase === "idle") this.#startRun();
  }

  /** Stops scheduling; resolves once a run in progress has finished. */
  async stop(): Promise<void> {
    this.#phase = "stopped";
    for (const t of [this.#minTimer, this.#maxTimer, this.#retryTimer]) this.#clock.clearTimeout(t);
    this.#minTimer = this.#maxTimer = this.#retryTimer = undefined;
    await this.#current;
  }

  get running(): boolean {
    return this.#phase === "running";
  }

  #startRun(): void {
    this.#requested = false;
    this.#phase = "running";
    this.#clock.clearTimeout(this.#maxTimer);
    this.#current = this.#execute();
  }

  async #execute(): Promise<void> {
    let ok = true;
    try {
      await this.#o.fn();
    } catch (e) {
      ok = false;
      this.#o.onError?.(e);
    }
    if (this.#phase === "stopped") return;
    this.#clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = ok ? undefined : this.#clock.setTimeout(() => this.run(), this.#o.retryIntervalMs);
    this.#maxTimer = this.#clock.setTimeout(() => this.run(), this.#o.maxIntervalMs);
    this.#phase = "cooling";
    this.#minTimer = this.#clock.setTimeout(() => {
      this.#minTimer = undefined;
      if (this.#phase !== "cooling") return;
      this.#phase = "idle";
      if (this.#requested) this.#startRun();
    }, this.#o.minIntervalMs);
  }
}

/**
 * The runner bounds kube-proxy (1.34+) uses: minSyncPeriod between runs, syncPeriod as the
 * retry interval after a failure, and a run at least every FullSyncPeriod.
 */
export function kubeProxyRunnerIntervals(
  minSyncPeriodMs = DEFAULT_MIN_SYNC_PERIOD_MS,
  syncPeriodMs = DEFAULT_SYNC_PERIOD_MS,
): Pick<BoundedFrequencyRunnerOptions, "minIntervalMs" | "retryIntervalMs" | "maxIntervalMs"> {
  return {
    minIntervalMs: minSyncPeriodMs,
    retryIntervalMs: syncPeriodMs,
    maxIntervalMs: FULL_SYNC_PERIOD_MS,
  };
}
