import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import { refuseArgs } from "../../plugin/no-args.js";
import type { Setup } from "../../plugin/setup.js";
import type { Message } from "../../wire/message.js";
import { isPlainNoError } from "./typify.js";

/**
 * `minimal`: a plain positive reply leaves with its answer section only; authority, additional and the
 * reply's own OPT are dropped (the server then puts on the OPT it builds from the query). Denials, errors and
 * delegations pass as they are.
 *
 * It has no `answerFromWire` on purpose: a reply answered from bytes further down would skip the trimming,
 * so behind `minimal` every query takes the full path.
 */
export class MinimalHandler implements Handler {
  readonly name = "minimal";

  constructor(
    private readonly next: Handler | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    let held: { msg: Message; wire: Buffer | undefined } | undefined;
    const holding: ResponseWriter = {
      transport: w.transport,
      remote: w.remote,
      // Upstream's nonwriter keeps the last message written.
      write: (msg, wire) => {
        held = { msg, wire };
      },
    };
    const result = await nextOrFailure(this.name, this.next, ctx, holding, r);
    // As upstream: an error returns before anything is written, and so does a chain that wrote nothing.
    if (result.error || !held) return result;
    const { msg, wire } = held;
    if (!isPlainNoError(msg, Math.floor(this.now() / 1000))) {
      w.write(msg, wire);
      return { rcode: 0 };
    }
    if (msg.authority.length === 0 && msg.additional.length === 0 && !msg.edns) {
      w.write(msg, wire);
      return { rcode: 0 };
    }
    const trimmed: Message = { ...msg, authority: [], additional: [] };
    delete trimmed.edns;
    w.write(trimmed);
    return { rcode: 0 };
  }
}

/** `minimal`, without arguments; as upstream, only the first `minimal` line of a block is read. */
export const setupMinimal: Setup = (ctx) => {
  const [stanza] = ctx.stanzas;
  if (stanza) refuseArgs(stanza, "minimal");
  return { plugin: (next) => new MinimalHandler(next) };
};
