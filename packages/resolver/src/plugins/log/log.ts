import type { Stanza } from "../../corefile/parse.js";
import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { clientWrote, nextOrFailure, PluginError } from "../../plugin/handler.js";
import { classify } from "../../plugin/pkg/response.js";
import type { Setup } from "../../plugin/setup.js";
import { argError, stanzaError } from "../../plugin/setup.js";
import { normalizeZone } from "../../plugin/zones.js";
import { encodedLength } from "../../wire/encode.js";
import type { Message } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";
import { isSubdomain } from "../../wire/name.js";
import { COMMON_FORMAT, expandFormat, formatEntry } from "./format.js";

export type LogClass = "all" | "success" | "denial" | "error";

/** One `log` line of a Corefile: the names it covers, which replies it logs, and how. */
export interface LogRule {
  scope: string;
  classes: ReadonlySet<LogClass>;
  format: string;
}

export interface LogDeps {
  /** Where query lines go; stdout by default, as CoreDNS. */
  log?: (line: string) => void;
  /** Monotonic milliseconds for `{duration}`. */
  monotonic?: () => number;
}

/** CoreDNS's response classes: NOERROR and delegations succeed, NXDOMAIN and NODATA deny, the rest err. */
export function replyClass(m: Message): Exclude<LogClass, "all"> {
  const kind = classify(m);
  if (kind === "noerror" || kind === "delegation") return "success";
  if (kind === "nxdomain" || kind === "nodata") return "denial";
  return "error";
}

/**
 * `log`: one `[INFO]` line per query the chain below answers, in CoreDNS's common log format by default.
 * The first rule whose scope holds the name decides; a query no rule covers is not logged.
 */
export class LogHandler implements Handler {
  readonly name = "log";

  constructor(
    private readonly next: Handler | undefined,
    private readonly rules: readonly LogRule[],
    private readonly out: (line: string) => void,
    private readonly monotonic: () => number,
  ) {}

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const name = r.question[0]?.name ?? ".";
    const rule = this.rules.find((x) => isSubdomain(name, x.scope));
    if (!rule) return nextOrFailure(this.name, this.next, ctx, w, r);
    let written: { msg: Message; size: number } | undefined;
    const recorder: ResponseWriter = {
      transport: w.transport,
      remote: w.remote,
      write(msg, wire) {
        written ??= { msg, size: wire ? wire.length : encodedLength(msg) };
        w.write(msg, wire);
      },
    };
    const started = this.monotonic();
    const result = await nextOrFailure(this.name, this.next, ctx, recorder, r);
    const duration = (this.monotonic() - started) / 1000;
    let reply = written;
    if (!reply && !clientWrote(result.rcode)) {
      const bare = replyTo(r, result.rcode);
      reply = { msg: bare, size: encodedLength(bare) };
    }
    if (!reply) return result;
    const cls = replyClass(reply.msg);
    if (rule.classes.has("all") || rule.classes.has(cls)) {
      const line = formatEntry(rule.format, {
        request: r,
        reply: reply.msg,
        requestSize: ctx.requestSize || encodedLength(r),
        replySize: reply.size,
        remote: w.remote,
        transport: w.transport,
        duration,
      });
      this.out(`[INFO] ${line}`);
    }
    return result;
  }
}

const CLASSES = new Set<string>(["all", "success", "denial", "error"]);

/** Parses every `log [NAMES...] [FORMAT] { class CLASSES... }` stanza of a block into rules. */
export function parseLog(stanzas: readonly Stanza[]): LogRule[] {
  const rules: LogRule[] = [];
  for (const stanza of stanzas) {
    let names = [...stanza.args];
    let format = COMMON_FORMAT;
    const last = names.at(-1);
    // A last argument with a brace is a format, but only when names come before it (as CoreDNS).
    if (names.length > 1 && last?.includes("{")) {
      format = expandFormat(last);
      names = names.slice(0, -1);
    }
    if (names.length === 0) names = ["."];
    const classes = new Set<LogClass>();
    for (const line of stanza.block) {
      if (line.name !== "class") throw stanzaError(line, "log", `unknown property '${line.name}'`);
      if (line.args.length === 0) throw argError(line, "log");
      for (const c of line.args) {
        if (!CLASSES.has(c)) throw new PluginError("log", `invalid Class: ${c}`);
        classes.add(c as LogClass);
      }
    }
    if (classes.size === 0) classes.add("all");
    for (const n of names) rules.push({ scope: normalizeZone(n), classes, format });
  }
  return rules;
}

export const setupLog: Setup<LogDeps> = (ctx) => {
  const rules = parseLog(ctx.stanzas);
  const out = ctx.deps.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const monotonic = ctx.deps.monotonic ?? (() => performance.now());
  return { plugin: (next) => new LogHandler(next, rules, out, monotonic) };
};
