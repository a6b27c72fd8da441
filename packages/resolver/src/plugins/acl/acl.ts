import { goCIDRContains, parseGoIP } from "@switchyard/basics";
import { Metrics } from "../../metrics/metrics.js";
import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import { edeOpt } from "../../plugin/pkg/ede.js";
import type { Setup } from "../../plugin/setup.js";
import { matchZone } from "../../plugin/zones.js";
import { Rcode } from "../../wire/constants.js";
import type { Message } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";
import { lowerName } from "../../wire/name.js";
import type { AclMetrics } from "./metrics.js";
import { aclMetrics } from "./metrics.js";
import type { AclAction, AclPolicy, AclRule } from "./rules.js";
import { parseAclRules } from "./rules.js";

const EDE_BLOCKED = 15;
const EDE_FILTERED = 17;

/**
 * `acl`: the first rule whose zones hold the query name and which has a policy matching the query's type and
 * source decides. `allow` ends the search and passes the query on; `block` answers REFUSED, `filter` an empty
 * NOERROR (both with an Extended DNS Error), and `drop` sends nothing. No `answerFromWire`: the decision
 * needs the client's address, which the fast path does not carry.
 */
export class AclHandler implements Handler {
  readonly name = "acl";

  constructor(
    private readonly next: Handler | undefined,
    private readonly rules: readonly AclRule[],
    private readonly metrics: AclMetrics,
  ) {}

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const q = r.question[0];
    const name = lowerName(q?.name ?? ".");
    const qtype = q?.type ?? 0;
    // A zone suffix (`fe80::1%eth0`) is no part of the address the policies compare against.
    const ip = parseGoIP(w.remote.address.replace(/%.*$/, ""));
    for (const rule of this.rules) {
      const zone = matchZone(name, rule.zones);
      if (zone === undefined) continue;
      // An address that cannot be read is blocked, as upstream does.
      const action = ip ? decide(rule.policies, qtype, ip) : "block";
      if (action === "allow") break;
      if (action === undefined) continue;
      return this.refuse(action, zone, ctx, w, r);
    }
    this.metrics.allowed.inc({ server: ctx.server, view: "" });
    return nextOrFailure(this.name, this.next, ctx, w, r);
  }

  private refuse(
    action: Exclude<AclAction, "allow">,
    zone: string,
    ctx: QueryContext,
    w: ResponseWriter,
    r: Message,
  ): Result {
    const labels = { server: ctx.server, zone, view: "" };
    if (action === "drop") {
      this.metrics.dropped.inc(labels);
      return { rcode: Rcode.NOERROR, dropped: true };
    }
    const blocked = action === "block";
    const reply = replyTo(r, blocked ? Rcode.REFUSED : Rcode.NOERROR);
    reply.edns = edeOpt({ code: blocked ? EDE_BLOCKED : EDE_FILTERED, reason: "" });
    w.write(reply);
    (blocked ? this.metrics.blocked : this.metrics.filtered).inc(labels);
    return { rcode: Rcode.NOERROR };
  }
}

/** The action of the first policy matching the query, or undefined when none does. */
function decide(policies: readonly AclPolicy[], qtype: number, ip: Uint8Array): AclAction | undefined {
  for (const p of policies) {
    if (p.types && !p.types.has(qtype)) continue;
    if (p.nets && !p.nets.some((n) => goCIDRContains(n, ip))) continue;
    return p.action;
  }
  return undefined;
}

/** `acl [ZONES...] { POLICY... }`, any number of times per server block. */
export const setupAcl: Setup<{ metrics?: Metrics }> = (ctx) => {
  const rules = parseAclRules(ctx.stanzas, ctx.blockZones);
  const metrics = aclMetrics(ctx.deps.metrics ?? new Metrics());
  return { plugin: (next) => new AclHandler(next, rules, metrics) };
};
