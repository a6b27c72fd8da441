import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import { refuseArgs } from "../../plugin/no-args.js";
import { passOnFromWire } from "../../plugin/pkg/pass-through.js";
import type { Setup } from "../../plugin/setup.js";
import type { Message, ResourceRecord } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";

const ANY = 255;
const HINFO = 13;

/**
 * `any` (RFC 8482): a query of type ANY gets one HINFO record instead of everything the name has; every other
 * query goes on down the chain untouched.
 */
export class AnyHandler implements Handler {
  readonly name = "any";
  /**
   * Only ANY queries are answered here, and those go the full way; for the rest this plugin is invisible, so a
   * fast answer from further down (a cache hit) is the same one serveDNS would give.
   */
  readonly answerFromWire: Handler["answerFromWire"];

  constructor(private readonly next: Handler | undefined) {
    this.answerFromWire = passOnFromWire(next, { fullPathFor: (q) => q.qtype === ANY });
  }

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const q = r.question[0];
    if (q?.type !== ANY) return nextOrFailure(this.name, this.next, ctx, w, r);
    const reply = replyTo(r);
    reply.answer = [rfc8482Record(q.name)];
    w.write(reply);
    return { rcode: 0 };
  }
}

/** The record upstream answers with: owned by the name as asked, class IN whatever the query's, TTL 8482. */
export function rfc8482Record(name: string): ResourceRecord {
  const text = (s: string) => Buffer.concat([Buffer.from([s.length]), Buffer.from(s, "latin1")]);
  const rdata = Buffer.concat([text("ANY obsoleted"), text("See RFC 8482")]);
  return { name, type: `TYPE${HINFO}`, class: 1, ttl: 8482, data: rdata };
}

/** `any`, without arguments or block; later `any` lines in the block are ignored, as upstream reads only the first. */
export const setupAny: Setup = (ctx) => {
  const [stanza] = ctx.stanzas;
  if (stanza) refuseArgs(stanza, "any");
  return { plugin: (next) => new AnyHandler(next) };
};
