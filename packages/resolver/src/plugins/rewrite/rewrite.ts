import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { clientWrote, nextOrFailure } from "../../plugin/handler.js";
import { Rcode } from "../../wire/constants.js";
import type { Message, Question } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";
import { fqdn, nameToLabels } from "../../wire/name.js";
import { revertingWriter } from "./reverter.js";
import type { RequestState, ResponseRule, Rule, Upstream } from "./rule.js";

/**
 * `rewrite`: changes the query before the rest of the chain sees it, and the reply on its way back. It has
 * no `answerFromWire` on purpose: a reply answered from bytes further down (cache, kubernetes) would skip
 * both the rewritten question and the reverted reply, so every query goes through `serveDNS` instead.
 */
export class RewriteHandler implements Handler {
  readonly name = "rewrite";

  constructor(
    private readonly next: Handler | undefined,
    private readonly rules: readonly Rule[],
    /** Where `cname` rules resolve their new targets: the server itself. */
    private readonly upstream?: Upstream,
  ) {}

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const original = r.question[0];
    if (!original) return nextOrFailure(this.name, this.next, ctx, w, r);
    const collected: ResponseRule[] = [];
    const state: RequestState = {
      remote: w.remote,
      transport: w.transport,
      server: ctx.server,
      ...(this.upstream ? { upstream: this.upstream } : {}),
    };
    for (const rule of this.rules) {
      const responses = rule.rewrite(r, state);
      if (!responses) continue;
      const name = r.question[0]?.name ?? "";
      if (!isDomainName(name)) {
        r.question[0] = original;
        return { rcode: Rcode.SERVFAIL, error: new Error(`invalid name after rewrite: ${name}`) };
      }
      collected.push(...responses);
      if (rule.mode === "stop") return this.serveReverted(ctx, w, r, original, collected);
    }
    // Upstream reverts only when a rule stopped the list or left response rules; a `continue` type
    // rewrite alone therefore reaches the client with the rewritten question.
    if (collected.length === 0) return nextOrFailure(this.name, this.next, ctx, w, r);
    return this.serveReverted(ctx, w, r, original, collected);
  }

  /**
   * Serves the rewritten query through the reverter. When the rest of the chain wrote nothing, the error
   * reply is written here, so it too goes out with the client's question (and rcode rules apply to it).
   */
  private async serveReverted(
    ctx: QueryContext,
    w: ResponseWriter,
    r: Message,
    original: Question,
    rules: readonly ResponseRule[],
  ): Promise<Result> {
    const reverting = revertingWriter(w, r, original, rules);
    const result = await nextOrFailure(this.name, this.next, ctx, reverting, r);
    if (clientWrote(result.rcode)) {
      await reverting.flush();
      return result;
    }
    reverting.write(replyTo(r, result.rcode));
    await reverting.flush();
    return result.error ? { rcode: Rcode.NOERROR, error: result.error } : { rcode: Rcode.NOERROR };
  }
}

/** Whether a rewritten name can go on the wire: no empty labels, none too long, not too long in all. */
export function isDomainName(name: string): boolean {
  if (name === "") return false;
  if (name === ".") return true;
  if (name.startsWith(".")) return false;
  try {
    nameToLabels(fqdn(name));
    return true;
  } catch {
    return false;
  }
}
