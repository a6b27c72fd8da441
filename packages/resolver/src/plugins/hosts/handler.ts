import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import { matchZone } from "../../plugin/zones.js";
import type { Message, ResourceRecord } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";
import { lowerName } from "../../wire/name.js";
import type { HostsData } from "./hosts-data.js";
import { addressFromReverse } from "./reverse.js";

const A = 1;
const PTR = 12;
const AAAA = 28;
const SERVFAIL = 2;

export interface HostsAnswerOptions {
  origins: readonly string[];
  fallthrough: readonly string[];
  fallthroughUnsupported: boolean;
  ttl: number;
}

/**
 * Answers A, AAAA and PTR from hosts data. A name the data holds is the plugin's alone: any other type
 * for it is NODATA (authoritative, no SOA: a hosts file has none). A name it lacks is passed on under
 * `fallthrough`, otherwise SERVFAIL, since without a SOA CoreDNS will not claim NXDOMAIN.
 */
export class HostsHandler implements Handler {
  readonly name = "hosts";

  constructor(
    private readonly next: Handler | undefined,
    private readonly data: HostsData,
    private readonly opts: HostsAnswerOptions,
  ) {}

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const q = r.question[0];
    if (!q) return nextOrFailure(this.name, this.next, ctx, w, r);
    // CoreDNS's request.Name(): owner names in answers are the question lower-cased.
    const qname = lowerName(q.name);
    // Reverse names are answered whatever the zones say; others outside them always go on.
    if (q.type !== PTR && matchZone(qname, this.opts.origins) === undefined)
      return nextOrFailure(this.name, this.next, ctx, w, r);
    let answer: ResourceRecord[] = [];
    if (q.type === PTR) {
      const names = this.data.lookupAddr(addressFromReverse(qname));
      // No PTR goes on even without `fallthrough`: reverse zones are rarely ours alone.
      if (names.length === 0) return nextOrFailure(this.name, this.next, ctx, w, r);
      answer = names.map((data) => ({ name: qname, type: "PTR", class: 1, ttl: this.opts.ttl, data }));
    } else if (q.type === A || q.type === AAAA) {
      const type = q.type === A ? "A" : "AAAA";
      const ips = q.type === A ? this.data.lookupV4(qname) : this.data.lookupV6(qname);
      answer = ips.map((data) => ({ name: qname, type, class: 1, ttl: this.opts.ttl, data }));
    } else if (this.opts.fallthroughUnsupported && this.falls(qname)) {
      return nextOrFailure(this.name, this.next, ctx, w, r);
    }
    if (answer.length === 0 && !this.known(qname)) {
      if (this.falls(qname)) return nextOrFailure(this.name, this.next, ctx, w, r);
      return { rcode: SERVFAIL };
    }
    const reply = replyTo(r);
    reply.aa = true;
    reply.answer = answer;
    w.write(reply);
    return { rcode: 0 };
  }

  private falls(qname: string): boolean {
    return matchZone(qname, this.opts.fallthrough) !== undefined;
  }

  /** Whether the name has an address of either family (PTR data does not count). */
  private known(qname: string): boolean {
    return this.data.lookupV4(qname).length > 0 || this.data.lookupV6(qname).length > 0;
  }
}
