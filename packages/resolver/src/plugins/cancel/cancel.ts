import { parseGoDuration } from "@switchyard/basics";
import { caddyLines } from "../../plugin/caddy-lines.js";
import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure, PluginError } from "../../plugin/handler.js";
import { passOnFromWire } from "../../plugin/pkg/pass-through.js";
import type { Setup } from "../../plugin/setup.js";
import { stanzaError } from "../../plugin/setup.js";
import type { Timers } from "../../server/timers.js";
import { systemTimers } from "../../server/timers.js";
import type { Message } from "../../wire/message.js";

/** Upstream's default: a millisecond more than forward's 5 s, so forward gives up on its own first. */
const DEFAULT_TIMEOUT_MS = 5001;

/**
 * `cancel`: every query gets an AbortSignal that fires after the timeout (or when the server's own signal
 * does), so plugins that wait on the network (forward) stop trying. The timer is cleared once the chain returns.
 */
export class CancelHandler implements Handler {
  readonly name = "cancel";
  /** Answers from bytes are synchronous, with nothing to cancel; this plugin is invisible to them. */
  readonly answerFromWire: Handler["answerFromWire"];

  constructor(
    private readonly next: Handler | undefined,
    private readonly timeoutMs: number,
    private readonly timers: Timers = systemTimers,
  ) {
    this.answerFromWire = passOnFromWire(next);
  }

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const deadline = new AbortController();
    const timer = this.timers.setTimeout(
      () => deadline.abort(new Error(`plugin/cancel: deadline of ${this.timeoutMs}ms exceeded`)),
      this.timeoutMs,
    );
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, deadline.signal]) : deadline.signal;
    try {
      return await nextOrFailure(this.name, this.next, { ...ctx, signal }, w, r);
    } finally {
      this.timers.clearTimeout(timer);
    }
  }
}

/**
 * `cancel [TIMEOUT]`: a Go duration above zero, 5001ms by default. Upstream's setup loops `c.Next()` over every
 * token, so each line of a block after it (and its braces) is read as one more `cancel` line: the last one counts,
 * and for a block that is the `}`, which leaves the default.
 */
export function parseCancel(ctx: Parameters<Setup>[0]): number {
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  for (const line of ctx.stanzas.flatMap(caddyLines)) {
    if (line.args.length > 1) {
      const last = line.args[line.args.length - 1];
      throw stanzaError(line, "cancel", `Wrong argument count or unexpected line ending after '${last}'`);
    }
    const text = line.args[0];
    if (text === undefined) {
      timeoutMs = DEFAULT_TIMEOUT_MS;
      continue;
    }
    const ms = parseGoDuration(text);
    // Upstream reports these without a position: plain errors, not the parser's.
    if (ms === undefined) throw new PluginError("cancel", `invalid duration: ${JSON.stringify(text)}`);
    if (ms <= 0) throw new PluginError("cancel", `invalid negative duration: ${JSON.stringify(text)}`);
    timeoutMs = ms;
  }
  return timeoutMs;
}

export const setupCancel: Setup = (ctx) => {
  const timeoutMs = parseCancel(ctx);
  return { plugin: (next) => new CancelHandler(next, timeoutMs) };
};
