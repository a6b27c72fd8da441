import { discardLogger, type Logger } from "../log/logger.js";
import { isNotFound } from "../rest/api-error.js";
import { type Clock, realClock, sleep } from "../util/clock.js";
import type { LeaderElectionRecord, LeaseLock, ObservedLease } from "./lease-lock.js";
import { formatMicroTime } from "./micro-time.js";

export interface LeaderCallbacks {
  /** Called once leadership is won. `signal` aborts when it is lost or the elector stops. */
  onStartedLeading(signal: AbortSignal): unknown;
  /** Called after leadership ends, including at shutdown. */
  onStoppedLeading?(): unknown;
  /** Called whenever the observed leader changes, including to ourselves. */
  onNewLeader?(identity: string): unknown;
}

export interface LeaderElectorOptions {
  lock: LeaseLock;
  /** Unique per candidate; usually the pod name plus a random suffix. */
  identity: string;
  /** How long a non-leader waits after the last observed change before taking over; 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before giving up; 10 s. */
  renewDeadlineMs?: number;
  /** Wait between attempts; 2 s. */
  retryPeriodMs?: number;
  /** On shutdown, hand the lease back so another candidate need not wait for it to expire. */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  clock?: Clock;
  random?: () => number;
  logger?: Logger;
}

// client-go spreads acquire attempts over [retryPeriod, 2.2 * retryPeriod).
const jitterFactor = 1.2;

/**
 * Lease-based leader election with client-go's rules: expiry is judged by
 * the local time at which this candidate last saw the lease change (never by
 * comparing clocks with the holder), and every write is a compare-and-swap.
 */
export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectorOptions, "logger" | "clock" | "random" | "callbacks">>;
  readonly #callbacks: LeaderCallbacks;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #log: Logger;
  #observed: ObservedLease | undefined;
  #observedAt = 0;
  #reportedLeader = "";

  constructor(options: LeaderElectorOptions) {
    this.#o = {
      lock: options.lock,
      identity: options.identity,
      leaseDurationMs: options.leaseDurationMs ?? 15_000,
      renewDeadlineMs: options.renewDeadlineMs ?? 10_000,
      retryPeriodMs: options.retryPeriodMs ?? 2_000,
      releaseOnCancel: options.releaseOnCancel ?? false,
    };
    if (this.#o.leaseDurationMs <= this.#o.renewDeadlineMs) {
      throw new Error("leader election: leaseDuration must be greater than renewDeadline");
    }
    if (this.#o.renewDeadlineMs <= jitterFactor * this.#o.retryPeriodMs) {
      throw new Error("leader election: renewDeadline must be greater than 1.2 * retryPeriod");
    }
    if (!options.identity) throw new Error("leader election: identity must not be empty");
    this.#callbacks = options.callbacks;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#log = (options.logger ?? discardLogger).child({
      lease: options.lock.describe(),
      identity: options.identity,
    });
  }

  isLeader(): boolean {
    return this.#observed?.record.holderIdentity === this.#o.identity;
  }

  /** The holder last observed; "" if none. */
  getLeader(): string {
    return this.#observed?.record.holderIdentity ?? "";
  }

  /**
   * Campaigns until leadership is won, leads until it is lost or `signal`
   * aborts, then returns. Run it again to campaign again.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (!(await this.#acquire(signal))) return;
    const leading = new AbortController();
    this.#invoke("onStartedLeading", () => this.#callbacks.onStartedLeading(leading.signal));
    await this.#renew(signal);
    leading.abort();
    if (signal.aborted && this.#o.releaseOnCancel) await this.#release();
    this.#invoke("onStoppedLeading", () => this.#callbacks.onStoppedLeading?.());
  }

  async #acquire(signal: AbortSignal): Promise<boolean> {
    this.#log.info("attempting to acquire leader lease");
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew()) {
        this.#log.info("acquired leader lease");
        return true;
      }
      const wait = this.#o.retryPeriodMs * (1 + jitterFactor * this.#random());
      await sleep(this.#clock, wait, signal).catch(() => undefined);
    }
    return false;
  }

  async #renew(signal: AbortSignal): Promise<void> {
    const { renewDeadlineMs, retryPeriodMs } = this.#o;
    while (!signal.aborted) {
      const deadline = this.#clock.now() + renewDeadlineMs;
      let renewed = false;
      while (!signal.aborted) {
        renewed = await this.#tryAcquireOrRenew();
        if (renewed || this.#clock.now() + retryPeriodMs > deadline) break;
        await sleep(this.#clock, retryPeriodMs, signal).catch(() => undefined);
      }
      if (signal.aborted) return;
      if (!renewed) {
        this.#log.warn("failed to renew lease within the renew deadline, stepping down");
        return;
      }
      await sleep(this.#clock, retryPeriodMs, signal).catch(() => undefined);
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const now = this.#clock.now();
    const { lock, identity } = this.#o;
    const ours: LeaderElectionRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
      acquireTime: formatMicroTime(now),
      renewTime: formatMicroTime(now),
      leaseTransitions: 0,
    };

    let current: ObservedLease;
    try {
      current = await lock.get();
    } catch (err) {
      if (!isNotFound(err)) {
        this.#log.warn("error retrieving lease", { error: err });
        return false;
      }
      try {
        this.#observe(await lock.create(ours), now);
        return true;
      } catch (createErr) {
        this.#log.warn("error creating lease", { error: createErr });
        return false;
      }
    }

    if (!this.#observed || !sameRecord(this.#observed.record, current.record)) this.#observe(current, now);
    else this.#observed = current;

    const old = current.record;
    const expiresAt = this.#observedAt + old.leaseDurationSeconds * 1000;
    if (old.holderIdentity !== "" && old.holderIdentity !== identity && expiresAt > now) {
      this.#log.debug("lease is held by another candidate and has not yet expired", {
        holder: old.holderIdentity,
      });
      return false;
    }
    const next: LeaderElectionRecord =
      old.holderIdentity === identity
        ? { ...ours, acquireTime: old.acquireTime, leaseTransitions: old.leaseTransitions }
        : { ...ours, leaseTransitions: old.leaseTransitions + 1 };
    try {
      // A 409 here means another candidate wrote first; the next attempt rereads.
      this.#observe(await lock.update(current.lease, next), now);
      return true;
    } catch (err) {
      this.#log.warn("error updating lease", { error: err });
      return false;
    }
  }

  async #release(): Promise<void> {
    if (!this.isLeader() || !this.#observed) return;
    const now = formatMicroTime(this.#clock.now());
    try {
      await this.#o.lock.update(this.#observed.lease, {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: this.#observed.record.leaseTransitions,
      });
      this.#observed = undefined;
      this.#log.info("released leader lease");
    } catch (err) {
      this.#log.warn("failed to release lease", { error: err });
    }
  }

  #observe(observed: ObservedLease, at: number): void {
    this.#observed = observed;
    this.#observedAt = at;
    const holder = observed.record.holderIdentity;
    if (holder && holder !== this.#reportedLeader) {
      this.#reportedLeader = holder;
      this.#invoke("onNewLeader", () => this.#callbacks.onNewLeader?.(holder));
    }
  }

  #invoke(name: string, fn: () => unknown): void {
    try {
      const result = fn();
      if (result instanceof Promise) {
        result.catch((err: unknown) =>
          this.#log.error("leader election callback rejected", { callback: name, error: err }),
        );
      }
    } catch (err) {
      this.#log.error("leader election callback threw", { callback: name, error: err });
    }
  }
}

function sameRecord(a: LeaderElectionRecord, b: LeaderElectionRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.renewTime === b.renewTime &&
    a.acquireTime === b.acquireTime &&
    a.leaseTransitions === b.leaseTransitions &&
    a.leaseDurationSeconds === b.leaseDurationSeconds
  );
}
