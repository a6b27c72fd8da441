import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import type { Setup } from "../../plugin/setup.js";
import type { Message } from "../../wire/message.js";
import type { HeaderRules } from "./rules.js";
import { applyFlagRules, parseHeaderStanzas } from "./rules.js";

/**
 * `header`: forces AA, RA and RD on or off in the query (before the rest of the chain sees it; the request is
 * changed in place, as upstream does, so the server's own error replies follow it too) and in every reply
 * written through it. Error replies the server writes for a chain that wrote nothing are not touched.
 *
 * It has no `answerFromWire` on purpose: a reply answered from bytes further down would skip the rules, so
 * behind `header` every query takes the full path.
 */
export class HeaderHandler implements Handler {
  readonly name = "header";

  constructor(
    private readonly next: Handler | undefined,
    private readonly rules: HeaderRules,
  ) {}

  serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    applyFlagRules(r, this.rules.query);
    const rules = this.rules.response;
    if (rules.length === 0) return nextOrFailure(this.name, this.next, ctx, w, r);
    const flagging: ResponseWriter = {
      transport: w.transport,
      remote: w.remote,
      write(msg, wire) {
        const changed: Message = { ...msg };
        applyFlagRules(changed, rules);
        const same = changed.aa === msg.aa && changed.ra === msg.ra && changed.rd === msg.rd;
        // Bytes encoded before the change would carry the old flags.
        if (same) w.write(msg, wire);
        else w.write(changed);
      },
    };
    return nextOrFailure(this.name, this.next, ctx, flagging, r);
  }
}

/** `header { query|response set|clear aa|ra|rd... }`; upstream's messages for every malformed line. */
export const setupHeader: Setup = (ctx) => {
  const rules = parseHeaderStanzas(ctx.stanzas);
  return { plugin: (next) => new HeaderHandler(next, rules) };
};
