import { discardLogger, type Logger } from "../log/logger.js";
import { isNotFound } from "../rest/api-error.js";
import { type Clock, realClock, sleep } from "../util/clock.js";
import { abortable, Deadline, TimeoutError } from "../util/deadline.js";
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
  /**
   * The limit of one renewal round, its requests included: a leader that has not renewed within it stops leading.
   * Each lease request also gets max(1 s, renewDeadline / 2). 10 s.
   */
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
  readonly #requestTimeoutMs: number;

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
    // client-go's NewFromKubeconfig gives the leader-election client this timeout, so that one hung request
    // cannot use up a whole renew round.
    this.#requestTimeoutMs = Math.max(1000, this.#o.renewDeadlineMs / 2);
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
      if (await this.#tryAcquireOrRenew(signal)) {
        this.#log.info("acquired leader lease");
        return true;
      }
      const wait = this.#o.retryPeriodMs * (1 + jitterFactor * this.#random());
      await sleep(this.#clock, wait, signal).catch(() => undefined);
    }
    return false;
  }

  /**
   * Renews every retry period until a round fails or `signal` aborts. A round is bounded by the renew deadline,
   * requests in flight included (client-go passes the round's context.WithTimeout down to the lock): a leader
   * whose apiserver stopped answering stops leading at the deadline, before the lease can expire for the others.
   */
  async #renew(signal: AbortSignal): Promise<void> {
    const { renewDeadlineMs, retryPeriodMs } = this.#o;
    while (!signal.aborted) {
      const round = new Deadline(this.#clock, signal).arm(
        renewDeadlineMs,
        () => new TimeoutError(`renew deadline of ${renewDeadlineMs} ms passed`, renewDeadlineMs),
      );
      const renewed = await this.#renewWithin(round.signal);
      round.clear();
      if (signal.aborted) return;
      if (!renewed) {
        this.#log.warn("failed to renew lease within the renew deadline, stopping leading", {
          renewDeadlineMs,
        });
        return;
      }
      await sleep(this.#clock, retryPeriodMs, signal).catch(() => undefined);
    }
  }

  /** Tries at once, then every retry period, until one attempt renews or `round` aborts. */
  async #renewWithin(round: AbortSignal): Promise<boolean> {
    while (!round.aborted) {
      // The attempt ends with the round even if a request in it does not watch its signal.
      const renewed = await abortable(this.#tryAcquireOrRenew(round), round).catch(() => false);
      if (renewed) return true;
      await sleep(this.#clock, this.#o.retryPeriodMs, round).catch(() => undefined);
    }
    return false;
  }

  /**
   * One read and, if the lease is ours or free, one write. Each request is bounded by its own limit (client-go's
   * leader-election client has max(1 s, renewDeadline / 2)) and by `signal`; a result that comes in after `signal`
   * aborted is not taken for a renewal.
   */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
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
      current = await this.#request(signal, (s) => lock.get(s));
    } catch (err) {
      if (!isNotFound(err)) {
        this.#log.warn("error retrieving lease", { error: err });
        return false;
      }
      try {
        const created = await this.#request(signal, (s) => lock.create(ours, s));
        if (signal.aborted) return false;
        this.#observe(created, now);
        return true;
      } catch (createErr) {
        this.#log.warn("error creating lease", { error: createErr });
        return false;
      }
    }
    if (signal.aborted) return false;

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
      const written = await this.#request(signal, (s) => lock.update(current.lease, next, s));
      if (signal.aborted) return false;
      this.#observe(written, now);
      return true;
    } catch (err) {
      this.#log.warn("error updating lease", { error: err });
      return false;
    }
  }

  /** One lock request, bounded by the per-request limit and by `signal`, whichever ends first. */
  async #request<T>(signal: AbortSignal, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ms = this.#requestTimeoutMs;
    const limit = new Deadline(this.#clock, signal).arm(
      ms,
      () => new TimeoutError(`lease ${this.#o.lock.describe()}: no answer within ${ms} ms`, ms),
    );
    try {
      return await abortable(send(limit.signal), limit.signal);
    } catch (err) {
      throw limit.expired ?? (signal.aborted ? signal.reason : err);
    } finally {
      limit.clear();
    }
  }

  /** Hands the lease back, within the renew deadline as client-go's release does. */
  async #release(): Promise<void> {
    if (!this.isLeader() || !this.#observed) return;
    const observed = this.#observed;
    const now = formatMicroTime(this.#clock.now());
    const ms = this.#o.renewDeadlineMs;
    const limit = new Deadline(this.#clock).arm(
      ms,
      () => new TimeoutError(`releasing the lease took longer than the renew deadline of ${ms} ms`, ms),
    );
    try {
      await this.#request(limit.signal, (s) =>
        this.#o.lock.update(
          observed.lease,
          {
            holderIdentity: "",
            leaseDurationSeconds: 1,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: observed.record.leaseTransitions,
          },
          s,
        ),
      );
      this.#observed = undefined;
      this.#log.info("released leader lease");
    } catch (err) {
      this.#log.warn("failed to release lease", { error: err });
    } finally {
      limit.clear();
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
