import { randomInt } from "node:crypto";
import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import { refuseArgs } from "../../plugin/no-args.js";
import type { Upstream } from "../../plugin/pkg/upstream.js";
import type { Setup } from "../../plugin/setup.js";
import { onlyOnce } from "../../plugin/setup.js";
import type { Timers } from "../../server/timers.js";
import { systemTimers } from "../../server/timers.js";
import type { Message } from "../../wire/message.js";
import { lowerName } from "../../wire/name.js";

const HINFO = 13;
/** CoreDNS gives up probing after 30 s and treats a third sighting of its probe as a loop. */
const PROBE_FOR_MS = 30_000;
const MAX_SIGHTINGS = 2;

export interface LoopDeps {
  upstream?: Upstream;
  timers?: Timers;
  /** Ends the process; default logs and exits 1, as CoreDNS's log.Fatalf does. */
  fatal?: (message: string) => void;
}

/**
 * `loop`: at startup sends `<random>.<random>.<zone> HINFO` through its own server. If that query comes
 * back to this plugin more than twice, the forwarding path leads back to us and the process stops.
 */
export class LoopHandler implements Handler {
  readonly name = "loop";
  private seen = 0;
  disabled = false;

  /** A probe that got no answer at all says nothing about loops: its sightings do not count. */
  reset(): void {
    this.seen = 0;
  }

  constructor(
    private readonly next: Handler | undefined,
    readonly probe: string,
    private readonly fatal: (message: string) => void,
  ) {}

  serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const q = r.question[0];
    if (!this.disabled && q?.type === HINFO && lowerName(q.name) === lowerName(this.probe)) {
      this.seen++;
      if (this.seen > MAX_SIGHTINGS) {
        this.fatal(
          `Loop (${w.remote.address}:${w.remote.port} -> ${ctx.server}) detected for zone "${ctx.zone}", see https://coredns.io/plugins/loop#troubleshooting. Query: "HINFO ${this.probe}"`,
        );
      }
    }
    return nextOrFailure(this.name, this.next, ctx, w, r);
  }
}

export const setupLoop: Setup<LoopDeps> = (ctx) => {
  const stanza = onlyOnce(ctx, "loop");
  refuseArgs(stanza, "loop");
  const zone = ctx.blockZones[0] ?? ".";
  const label = () => String(randomInt(2 ** 47));
  const probe = `${label()}.${label()}.${zone === "." ? "" : zone}`;
  const fatal =
    ctx.deps.fatal ??
    ((message: string) => {
      console.error(`[FATAL] plugin/loop: ${message}`);
      process.exit(1);
    });
  const timers = ctx.deps.timers ?? systemTimers;
  let handler: LoopHandler | undefined;
  let timer: unknown;
  let started = 0;
  const send = async () => {
    if (!handler || handler.disabled || !ctx.deps.upstream) return;
    const reply = await ctx.deps.upstream(probe, HINFO).catch(() => undefined);
    if (reply) {
      // Any answer, SERVFAIL from a dead upstream included, means the probe's path has an end. A real
      // loop shows within moments, so keep counting briefly, then stop, as CoreDNS does.
      timer = timers.setTimeout(() => {
        if (handler) handler.disabled = true;
      }, 2000);
      return;
    }
    handler.reset();
    if (Date.now() - started < PROBE_FOR_MS) timer = timers.setTimeout(() => void send(), 1000);
  };
  ctx.lifecycle.onStartup(() => {
    started = Date.now();
    timer = timers.setTimeout(() => void send(), 500);
  });
  ctx.lifecycle.onShutdown(() => timers.clearTimeout(timer));
  return {
    plugin: (next) => {
      handler = new LoopHandler(next, probe, fatal);
      return handler;
    },
  };
};
