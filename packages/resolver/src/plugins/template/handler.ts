import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import { edeOpt } from "../../plugin/pkg/ede.js";
import type { Upstream } from "../../plugin/pkg/upstream.js";
import { matchZone } from "../../plugin/zones.js";
import { Rcode } from "../../wire/constants.js";
import type { Message } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";
import { lowerName } from "../../wire/name.js";
import { matchRule } from "./match.js";
import type { TemplateMetrics } from "./metrics.js";
import type { TemplateRule } from "./options.js";
import { renderRecord } from "./render.js";
import type { TemplateData } from "./tmpl-exec.js";

const A = 1;
const AAAA = 28;

/**
 * `template`: answers from Go templates. It has no `answerFromWire`: every reply is built per query (the
 * client's address and the regex groups go into it), so the server always takes it through `serveDNS`.
 */
export class TemplateHandler implements Handler {
  readonly name = "template";

  constructor(
    private readonly next: Handler | undefined,
    private readonly zones: readonly string[],
    private readonly rules: readonly TemplateRule[],
    private readonly metrics: TemplateMetrics,
    private readonly upstream: Upstream | undefined,
  ) {}

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const q = r.question[0];
    // CoreDNS's request.Name(): the question lower-cased, which regexes and `.Name` see.
    const qname = q ? lowerName(q.name) : "";
    if (!q || matchZone(qname, this.zones) === undefined)
      return nextOrFailure(this.name, this.next, ctx, w, r);
    // No metadata plugin exists here, so every `.Meta` lookup finds nothing, as upstream's does without one.
    const meta = () => "";
    for (const rule of this.rules) {
      const outcome = matchRule(rule, q, qname, w.remote.address, meta);
      if (outcome.kind === "servfail") return { rcode: Rcode.SERVFAIL };
      if (outcome.kind === "next") continue;
      const { data } = outcome;
      this.metrics.matches.inc({
        server: ctx.server,
        zone: data.zone,
        view: "",
        class: data.class,
        type: data.type,
      });
      // SERVFAIL is left to the server to write, like every SERVFAIL a plugin returns.
      if (rule.rcode === Rcode.SERVFAIL) return { rcode: Rcode.SERVFAIL };
      try {
        w.write(await this.reply(ctx, r, rule, data));
      } catch (err) {
        return { rcode: Rcode.SERVFAIL, error: err instanceof Error ? err : new Error(String(err)) };
      }
      // Upstream returns the template's rcode even for REFUSED or FORMERR; the reply is written already.
      return { rcode: rule.rcode };
    }
    return nextOrFailure(this.name, this.next, ctx, w, r);
  }

  /** The authoritative reply: the sections in order, CNAME targets resolved for A and AAAA questions. */
  private async reply(
    ctx: QueryContext,
    r: Message,
    rule: TemplateRule,
    data: TemplateData,
  ): Promise<Message> {
    const msg = replyTo(r, rule.rcode);
    msg.aa = true;
    const labels = { server: ctx.server, zone: data.zone, class: data.class, type: data.type };
    const qtype = r.question[0]?.type;
    for (const tmpl of rule.answer) {
      const rr = renderRecord(tmpl, data, labels, this.metrics);
      msg.answer.push(rr);
      if (rr.type === "CNAME" && (qtype === A || qtype === AAAA)) {
        const up = await this.lookup(rr.data, qtype);
        if (up) {
          msg.tc = up.tc;
          msg.answer.push(...up.answer);
        }
      }
    }
    msg.additional = rule.additional.map((t) => renderRecord(t, data, labels, this.metrics));
    msg.authority = rule.authority.map((t) => renderRecord(t, data, labels, this.metrics));
    if (rule.ede) msg.edns = edeOpt(rule.ede);
    return msg;
  }

  private async lookup(name: string, qtype: number): Promise<Message | undefined> {
    if (!this.upstream) return undefined;
    try {
      return await this.upstream(name, qtype);
    } catch {
      return undefined;
    }
  }
}
