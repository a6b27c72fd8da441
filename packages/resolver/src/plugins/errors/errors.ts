import { CorefileSyntaxError } from "../../corefile/errors.js";
import type { Stanza } from "../../corefile/parse.js";
import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import { passOnFromWire } from "../../plugin/pkg/pass-through.js";
import type { Setup } from "../../plugin/setup.js";
import { argError, onlyOnce, stanzaError } from "../../plugin/setup.js";
import type { Timers } from "../../server/timers.js";
import { typeName } from "../../wire/constants.js";
import type { Message } from "../../wire/message.js";
import { type ConsolidatePattern, Consolidator, type LogLevel, parseConsolidate } from "./consolidate.js";

export type ErrorLogger = (line: string) => void;

/**
 * `errors`: logs every error the rest of the chain returns, as CoreDNS does:
 * `[ERROR] plugin/errors: 2 example.org. A: <error>` (rcode, name, type), or counts it into a `consolidate`
 * summary. It changes nothing else.
 */
export class ErrorsHandler implements Handler {
  readonly name = "errors";
  /** A reply from bytes carries no error, so there is nothing to log: pass it through. */
  readonly answerFromWire: Handler["answerFromWire"];

  constructor(
    private readonly next: Handler | undefined,
    private readonly log: (level: LogLevel, text: string) => void,
    private readonly consolidator: Consolidator,
  ) {
    this.answerFromWire = passOnFromWire(next);
  }

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const result = await nextOrFailure(this.name, this.next, ctx, w, r);
    if (result.error) {
      const level = this.consolidator.record(result.error.message);
      const q = r.question[0];
      if (level !== "counted")
        this.log(
          level,
          `${result.rcode} ${q?.name ?? "."} ${typeName(q?.type ?? 0)}: ${result.error.message}`,
        );
    }
    return result;
  }
}

export interface ErrorsDeps {
  errorLog?: ErrorLogger;
  /** For `consolidate`'s summaries; the real timers when unset. */
  timers?: Timers;
}

const PREFIX: Record<LogLevel, string> = { error: "ERROR", warning: "WARNING", info: "INFO", debug: "DEBUG" };

/**
 * `errors [stdout] { consolidate DURATION REGEXP [LEVEL] [show_first]; stacktrace }`, with CoreDNS's setup
 * errors. `stacktrace` sets the server's flag: the line it logs for a chain that threw gets the stack.
 */
export const setupErrors: Setup<ErrorsDeps> = (ctx) => {
  const stanza = onlyOnce(ctx, "errors");
  // Caddy's ArgErr names the token it stopped at: the last argument.
  if (stanza.args.length > 1)
    throw argError({ ...stanza, name: stanza.args.at(-1) ?? stanza.name }, "errors");
  const [file] = stanza.args;
  if (file !== undefined && file !== "stdout")
    throw stanzaError(stanza, "errors", `invalid log file: ${file}`);
  const patterns = stanza.block.flatMap((option) => parseOption(option));
  if (stanza.block.some((option) => option.name === "stacktrace")) ctx.server.stacktrace = true;
  const line = ctx.deps.errorLog ?? ((text: string) => console.error(text));
  // Debug lines show only under the `debug` plugin, as CoreDNS's log.Debugf; read at log time, after setup.
  const log = (level: LogLevel, text: string) => {
    if (level !== "debug" || ctx.server.debug) line(`[${PREFIX[level]}] plugin/errors: ${text}`);
  };
  const consolidator = new Consolidator(patterns, log, ctx.deps.timers);
  ctx.lifecycle.onShutdown(() => consolidator.stop());
  return { plugin: (next) => new ErrorsHandler(next, log, consolidator) };
};

function parseOption(option: Stanza): ConsolidatePattern[] {
  // Upstream reads the block token by token: a word after `stacktrace` is taken as the next option.
  const unknown = option.name === "stacktrace" ? option.args[0] : option.name;
  if (unknown !== undefined && option.name !== "consolidate")
    throw new CorefileSyntaxError(option.file, option.line, unknown, `Unknown field ${unknown}`, "errors");
  if (option.name === "stacktrace") return [];
  const parsed = parseConsolidate(option.args);
  if ("re" in parsed) return [parsed];
  if (parsed.error === undefined)
    throw argError({ ...option, name: option.args.at(-1) ?? option.name }, "errors");
  throw stanzaError(option, "errors", parsed.error);
}
