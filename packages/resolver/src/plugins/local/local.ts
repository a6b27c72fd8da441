import type { Metrics } from "../../metrics/metrics.js";
import { Metrics as NewMetrics } from "../../metrics/metrics.js";
import type { CounterSeries } from "../../metrics/series.js";
import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import { passOnFromWire } from "../../plugin/pkg/pass-through.js";
import type { Setup } from "../../plugin/setup.js";
import { stanzaError } from "../../plugin/setup.js";
import { matchZone } from "../../plugin/zones.js";
import type { Message } from "../../wire/message.js";
import { lowerName } from "../../wire/name.js";
import { loopbackReply, zoneReply } from "./answers.js";

const ZONES = ["localhost.", "0.in-addr.arpa.", "127.in-addr.arpa.", "255.in-addr.arpa."];

/**
 * `local`: answers queries for localhost, the 0, 127 and 255 reverse zones, names under `.localhost.` and
 * (unless `localhost_prefix off`) names starting `localhost.`, so that they never leave the server.
 */
export class LocalHandler implements Handler {
  readonly name = "local";
  /** Names this plugin answers take the full path (which counts them); for the others it is invisible. */
  readonly answerFromWire: Handler["answerFromWire"];

  constructor(
    private readonly next: Handler | undefined,
    private readonly legacyPrefix: boolean,
    private readonly subdomainQueries: CounterSeries,
  ) {
    this.answerFromWire = passOnFromWire(next, {
      fullPathFor: (q) => this.loopbackName(q.name) || matchZone(q.name, ZONES) !== undefined,
    });
  }

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const q = r.question[0];
    if (!q) return nextOrFailure(this.name, this.next, ctx, w, r);
    const name = lowerName(q.name);
    if (this.loopbackName(name)) {
      this.subdomainQueries.value++;
      w.write(loopbackReply(r, q.name, q.type));
      return { rcode: 0 };
    }
    const zone = matchZone(name, ZONES);
    if (zone === undefined) return nextOrFailure(this.name, this.next, ctx, w, r);
    w.write(zoneReply(r, q.name, name, q.name.slice(q.name.length - zone.length), q.type));
    return { rcode: 0 };
  }

  /** A name below `localhost.` (RFC 6761), or one starting with it when the legacy prefix is on. */
  private loopbackName(name: string): boolean {
    if (name.length <= "localhost.".length) return false;
    return name.endsWith(".localhost.") || (this.legacyPrefix && name.startsWith("localhost."));
  }
}

/** `local { localhost_prefix on|off }`; every stanza is read, the last `localhost_prefix` wins. */
export const setupLocal: Setup<{ metrics?: Metrics }> = (ctx) => {
  let legacyPrefix = true;
  for (const stanza of ctx.stanzas) {
    // caddy's ArgErr names the last token read, here the last argument.
    const extra = stanza.args.at(-1);
    if (extra !== undefined)
      throw stanzaError(stanza, "local", `Wrong argument count or unexpected line ending after '${extra}'`);
    for (const line of stanza.block) {
      if (line.name !== "localhost_prefix")
        throw stanzaError(line, "local", `unknown property '${line.name}'`);
      const last = line.args.at(-1) ?? line.name;
      if (line.args.length !== 1)
        throw stanzaError(line, "local", `Wrong argument count or unexpected line ending after '${last}'`);
      const [value] = line.args;
      if (value !== "on" && value !== "off")
        throw stanzaError(
          line,
          "local",
          `localhost_prefix expects 'on' or 'off', got ${JSON.stringify(value)}`,
        );
      legacyPrefix = value === "on";
    }
  }
  const metrics = ctx.deps.metrics ?? new NewMetrics();
  const counter = metrics.counter(
    "coredns_local_localhost_requests_total",
    "Counter of special localhost subdomain requests.",
  );
  const series = counter.series({});
  return { plugin: (next) => new LocalHandler(next, legacyPrefix, series) };
};
