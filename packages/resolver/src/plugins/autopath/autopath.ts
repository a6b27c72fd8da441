import type { CounterFamily } from "../../metrics/series.js";
import type { Handler, Peer, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { clientWrote, nextOrFailure } from "../../plugin/handler.js";
import type { AutoPathFunc } from "../../plugin/pkg/search-source.js";
import { matchZone } from "../../plugin/zones.js";
import type { Transport } from "../../wire/edns.js";
import type { Message } from "../../wire/message.js";
import { fqdn, isSubdomain, lowerName, splitLabels } from "../../wire/name.js";
import { cnameFromOriginal } from "./cname.js";
import { PLUGIN } from "./options.js";

const NXDOMAIN = 3;

/** Where the search path comes from: a fixed one read from a file, or a plugin asked per query. */
export interface SearchPathSource {
  /** From RESOLV-CONF, ending in ""; empty when there was no file. */
  search: readonly string[];
  /** From `@NAME`; when present it is asked instead of `search`, even if it says no. */
  fromPlugin?: AutoPathFunc;
}

/**
 * Server-side search path completion. A query under the first search domain is retried with its base
 * name under each search domain in turn, the bare name last; the first reply that is not NXDOMAIN goes
 * back with a CNAME from the asked name. When every try fails the first reply goes back as it was,
 * and the client walks its search path itself.
 */
export class AutoPathHandler implements Handler {
  readonly name = PLUGIN;

  constructor(
    private readonly next: Handler | undefined,
    private readonly zones: readonly string[],
    private readonly source: SearchPathSource,
    private readonly success: CounterFamily,
  ) {}

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const asked = r.question[0]?.name;
    if (asked === undefined) return nextOrFailure(this.name, this.next, ctx, w, r);
    const name = lowerName(fqdn(asked));
    if (matchZone(name, this.zones) === undefined) return nextOrFailure(this.name, this.next, ctx, w, r);
    const search = this.searchPathFor(name, w.remote);
    const first = search[0];
    if (first === undefined || !inFirstSearchDomain(name, first))
      return nextOrFailure(this.name, this.next, ctx, w, r);
    const base = baseName(asked, first);
    if (base === undefined)
      return { rcode: 2, error: new Error(`trimzone: overshot qname: ${asked}for zone ${first}`) };
    return this.walk(ctx, w, r, base, search);
  }

  private searchPathFor(name: string, remote: Peer): readonly string[] {
    if (this.source.fromPlugin) return this.source.fromPlugin({ name, remote }) ?? [];
    return this.source.search;
  }

  /** Tries `base` under each search domain; see the class comment for what goes back. */
  private async walk(
    ctx: QueryContext,
    w: ResponseWriter,
    r: Message,
    base: string,
    search: readonly string[],
  ): Promise<Result> {
    const asked = r.question[0]?.name ?? "";
    let firstResult: Result = { rcode: 2 };
    let firstReply: Message | undefined;
    // Tries get a trace of their own: the reply is autopath's (upstream labels it so in its metrics).
    const tryCtx: QueryContext = { ...ctx, trace: {} };
    for (const [i, domain] of search.entries()) {
      const attempt = withQuestionName(r, `${base}.${domain}`);
      const catcher = new ReplyCatcher(w.transport, w.remote);
      const result = await nextOrFailure(this.name, this.next, tryCtx, catcher, attempt);
      // As upstream: an error ends the walk, and nothing caught so far is written.
      if (result.error) return result;
      if (i === 0) {
        firstResult = result;
        firstReply = catcher.reply;
      }
      const reply = catcher.reply;
      if (!clientWrote(result.rcode) || !reply || reply.rcode === NXDOMAIN) continue;
      cnameFromOriginal(reply, asked);
      w.write(reply);
      this.success.inc({ server: ctx.server });
      return result;
    }
    if (clientWrote(firstResult.rcode) && firstReply) w.write(firstReply);
    return firstResult;
  }
}

/** Holds the reply of one try instead of sending it (CoreDNS's nonwriter). */
class ReplyCatcher implements ResponseWriter {
  reply?: Message;

  constructor(
    readonly transport: Transport,
    readonly remote: Peer,
  ) {}

  // The encoded bytes are dropped: the reply is changed (or re-sent) before it leaves.
  write(msg: Message): void {
    this.reply = msg;
  }
}

/** The query with only its question name changed; the rest is shared, as plugins treat it as read-only. */
function withQuestionName(r: Message, name: string): Message {
  return { ...r, question: r.question.map((q, i) => (i === 0 ? { ...q, name } : q)) };
}

/**
 * Whether `name` is the first search domain or below it. An empty first element (a file without a
 * search list) matches nothing, as miekg/dns counts "" as one label that no name ends in.
 */
function inFirstSearchDomain(name: string, first: string): boolean {
  return first !== "" && isSubdomain(name, first);
}

/**
 * `asked` without as many labels as `domain` has, in the query's case (CoreDNS's TrimZone): undefined
 * when nothing would be left, which upstream answers with SERVFAIL.
 */
function baseName(asked: string, domain: string): string | undefined {
  const labels = splitLabels(fqdn(asked).slice(0, -1));
  const drop = domain === "." ? 0 : splitLabels(domain.slice(0, -1)).length;
  if (labels.length <= drop) return undefined;
  return labels.slice(0, labels.length - drop).join(".");
}
