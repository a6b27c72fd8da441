import type {
  Handler,
  QueryContext,
  ResponseWriter,
  Result,
  WireAnswerContext,
} from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import type { Setup } from "../../plugin/setup.js";
import { argError, onlyOnce, stanzaError } from "../../plugin/setup.js";
import { typeName } from "../../wire/constants.js";
import type { Message } from "../../wire/message.js";
import type { PeekedQuery } from "../../wire/peek.js";

export type ErrorLogger = (line: string) => void;

/**
 * `errors`: logs every error the rest of the chain returns, as CoreDNS does:
 * `[ERROR] plugin/errors: 2 example.org. A: <error>` (rcode, name, type). It changes nothing else.
 */
export class ErrorsHandler implements Handler {
  readonly name = "errors";

  constructor(
    private readonly next: Handler | undefined,
    private readonly log: ErrorLogger,
  ) {}

  /** A reply from bytes carries no error, so there is nothing to log: pass it through. */
  answerFromWire(q: PeekedQuery, ctx: WireAnswerContext): Buffer | undefined {
    return this.next?.answerFromWire?.(q, ctx);
  }

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const result = await nextOrFailure(this.name, this.next, ctx, w, r);
    if (result.error) {
      const q = r.question[0];
      this.log(
        `[ERROR] plugin/errors: ${result.rcode} ${q?.name ?? "."} ${typeName(q?.type ?? 0)}: ${result.error.message}`,
      );
    }
    return result;
  }
}

export interface ErrorsDeps {
  errorLog?: ErrorLogger;
}

/** `errors` takes no arguments here; `consolidate` and `stacktrace` are not supported yet. */
export const setupErrors: Setup<ErrorsDeps> = (ctx) => {
  const stanza = onlyOnce(ctx, "errors");
  if (stanza.args.length > 0) throw argError(stanza, "errors");
  const first = stanza.block[0];
  if (first) throw stanzaError(first, "errors", `option '${first.name}' is not supported yet`);
  const log = ctx.deps.errorLog ?? ((line: string) => console.error(line));
  return { plugin: (next) => new ErrorsHandler(next, log) };
};
