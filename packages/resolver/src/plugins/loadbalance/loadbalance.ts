import type {
  Handler,
  QueryContext,
  ResponseWriter,
  Result,
  WireAnswerContext,
} from "../../plugin/handler.js";
import { nextOrFailure, PluginError } from "../../plugin/handler.js";
import type { Setup } from "../../plugin/setup.js";
import { onlyOnce, stanzaError } from "../../plugin/setup.js";
import type { Message } from "../../wire/message.js";
import type { PeekedQuery } from "../../wire/peek.js";
import type { RandomIndex } from "./shuffle.js";
import { mathRandomIndex, roundRobin } from "./shuffle.js";
import { roundRobinWire } from "./wire.js";

/**
 * `loadbalance`: shuffles the address records of every NOERROR reply on its way out. It sits before
 * `cache` in plugin.cfg, so cached answers are shuffled too.
 */
export class LoadBalanceHandler implements Handler {
  readonly name = "loadbalance";

  constructor(
    private readonly next: Handler | undefined,
    private readonly random: RandomIndex,
  ) {}

  /**
   * A reply the rest of the chain answers from bytes (kubeadm's Corefile puts loadbalance before cache and
   * kubernetes), in the order serveDNS would give it: same rules, same random draws.
   */
  answerFromWire(q: PeekedQuery, ctx: WireAnswerContext): Buffer | undefined {
    const reply = this.next?.answerFromWire?.(q, ctx);
    if (!reply || q.qtype === 252 || q.qtype === 251 || ((reply[3] as number) & 0xf) !== 0) return reply;
    return roundRobinWire(reply, reply.length - ctx.reserve, this.random) ?? reply;
  }

  serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const qtype = r.question[0]?.type;
    if (qtype === 252 || qtype === 251) return nextOrFailure(this.name, this.next, ctx, w, r);
    const random = this.random;
    const shuffling: ResponseWriter = {
      transport: w.transport,
      remote: w.remote,
      write(msg, wire) {
        if (msg.rcode !== 0) return w.write(msg, wire);
        const shuffled: Message = {
          ...msg,
          answer: roundRobin(msg.answer, random),
          authority: roundRobin(msg.authority, random),
          additional: roundRobin(msg.additional, random),
        };
        // Most answers hold one address; their encoded form (a cache hit) is still good then.
        if (wire && sameOrder(msg, shuffled)) return w.write(msg, wire);
        w.write(shuffled);
      },
    };
    return nextOrFailure(this.name, this.next, ctx, shuffling, r);
  }
}

function sameOrder(a: Message, b: Message): boolean {
  const same = (x: readonly unknown[], y: readonly unknown[]) => x.every((rr, i) => rr === y[i]);
  return same(a.answer, b.answer) && same(a.authority, b.authority) && same(a.additional, b.additional);
}

export interface LoadBalanceDeps {
  random?: RandomIndex;
}

/** `loadbalance [round_robin]`; `weighted` and `prefer` are not supported yet. */
export const setupLoadBalance: Setup<LoadBalanceDeps> = (ctx) => {
  const stanza = onlyOnce(ctx, "loadbalance");
  const policy = stanza.args[0] ?? "round_robin";
  // Upstream's words for a policy it does not know; ours for the two it has that this build lacks.
  if (!["round_robin", "weighted", "prefer"].includes(policy))
    throw new PluginError("loadbalance", `unknown policy: ${policy}`);
  if (policy !== "round_robin" || stanza.args.length > 1) {
    throw stanzaError(stanza, "loadbalance", `unsupported policy '${stanza.args.join(" ")}'`);
  }
  const random = ctx.deps.random ?? mathRandomIndex;
  return { plugin: (next) => new LoadBalanceHandler(next, random) };
};
