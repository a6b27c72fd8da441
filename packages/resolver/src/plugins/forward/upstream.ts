import type { Timers } from "../../server/timers.js";
import { readHeader } from "../../wire/decode.js";
import { encodeMessage } from "../../wire/encode.js";
import { newQuery } from "../../wire/message.js";
import type { HostPort } from "./exchange.js";
import { exchange, label } from "./exchange.js";
import { UdpPool } from "./udp-pool.js";

export interface HealthCheckOptions {
  intervalMs: number;
  /** Send the probe with RD set (false with `no_rec`). */
  recursionDesired: boolean;
  domain: string;
  forceTcp: boolean;
}

/**
 * One upstream and its health. A network error starts probing it with `<domain> IN NS` every interval;
 * any reply at all (even SERVFAIL) counts as healthy and ends the probing. Each failed probe adds one
 * fail; with more fails than max_fails the upstream is down.
 */
export class Upstream {
  fails = 0;
  private probing = false;
  private timer: unknown;
  private stopped = false;
  /** Sockets for queries over UDP, reused until they expire. */
  readonly udp: UdpPool;
  /** `host:port` as metrics and errors name the upstream. */
  readonly addr: string;

  constructor(
    readonly to: HostPort,
    private readonly health: HealthCheckOptions,
    private readonly timers: Timers,
    private readonly randomId: () => number,
    private readonly onProbeFailure: (addr: string) => void,
    expireMs = 10_000,
  ) {
    this.udp = new UdpPool(to, expireMs, timers, () => performance.now());
    this.addr = label(to);
  }

  down(maxFails: number): boolean {
    return maxFails !== 0 && this.fails > maxFails;
  }

  /** Starts probing unless a probe loop is already running. */
  healthcheck(): void {
    if (this.probing || this.stopped) return;
    this.probing = true;
    void this.probe();
  }

  stop(): void {
    this.stopped = true;
    this.timers.clearTimeout(this.timer);
    this.udp.close();
  }

  private async probe(): Promise<void> {
    const q = newQuery(this.health.domain, 2, this.randomId());
    q.rd = this.health.recursionDesired;
    try {
      const reply = await exchange(
        this.to,
        encodeMessage(q),
        this.health.forceTcp ? "tcp" : "udp",
        this.health.intervalMs > 0 ? Math.max(this.health.intervalMs, 1000) : 1000,
        this.timers,
      );
      if (!readHeader(reply)) throw new Error("unreadable reply");
      this.fails = 0;
      this.probing = false;
      return;
    } catch {
      this.fails++;
      this.onProbeFailure(this.addr);
    }
    if (this.stopped) return;
    this.timer = this.timers.setTimeout(() => void this.probe(), this.health.intervalMs);
  }
}
