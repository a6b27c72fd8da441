import { hostname } from "node:os";
import { PluginOnceError } from "../../corefile/errors.js";
import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import { passOnFromWire } from "../../plugin/pkg/pass-through.js";
import type { Setup } from "../../plugin/setup.js";
import { onlyOnce } from "../../plugin/setup.js";
import type { Edns, Message } from "../../wire/message.js";

const NSID = 3;

/**
 * `nsid` (RFC 5001): when a query carries an NSID option, the reply gets one holding this server's identifier.
 * Queries without it pass untouched.
 */
export class NsidHandler implements Handler {
  readonly name = "nsid";
  /**
   * The fast path only takes queries whose OPT record has no options at all (see peekQuery), so none of them
   * asks for an NSID and this plugin has nothing to add: it passes them on.
   */
  readonly answerFromWire: Handler["answerFromWire"];

  constructor(
    private readonly next: Handler | undefined,
    private readonly id: Buffer,
  ) {
    this.answerFromWire = passOnFromWire(next);
  }

  serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const asked = r.edns;
    if (!asked?.options.some((o) => o.code === NSID)) return nextOrFailure(this.name, this.next, ctx, w, r);
    const id = this.id;
    const adding: ResponseWriter = {
      transport: w.transport,
      remote: w.remote,
      // The reply changes, so bytes encoded before must not be passed on.
      write: (msg) => w.write({ ...msg, edns: withNsid(msg.edns, asked, id) }),
    };
    return nextOrFailure(this.name, this.next, ctx, adding, r);
  }
}

/**
 * The reply's OPT with every NSID option set to `id`, or one appended when it had none. A reply without OPT
 * gets a fresh one with the query's buffer size and no other option, so the server copies none of the query's
 * options over. Upstream makes that OPT with DO set, and its scrubbing keeps the bit: such replies carry DO
 * whatever the query said (the differential test shows it).
 */
export function withNsid(own: Edns | undefined, asked: Edns, id: Buffer): Edns {
  if (!own)
    return { udpSize: asked.udpSize, version: 0, dnssecOk: true, options: [{ code: NSID, data: id }] };
  const present = own.options.some((o) => o.code === NSID);
  const options = own.options.map((o) => (o.code === NSID ? { code: NSID, data: id } : o));
  if (!present) options.push({ code: NSID, data: id });
  return { ...own, options };
}

/** `nsid [DATA...]`: the words joined by spaces, or the host's name; once per server block, no block. */
export const setupNsid: Setup = (ctx) => {
  const stanza = onlyOnce(ctx, "nsid");
  // Upstream reads a block's tokens as further `nsid` stanzas.
  if (stanza.blockEnd !== undefined) throw new PluginOnceError(stanza.file, stanza.line, "nsid");
  const text = stanza.args.length > 0 ? stanza.args.join(" ") : defaultId();
  const id = Buffer.from(text, "utf8");
  return { plugin: (next) => new NsidHandler(next, id) };
};

function defaultId(): string {
  try {
    return hostname();
  } catch {
    return "localhost";
  }
}
