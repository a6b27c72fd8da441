import type { Message, ResourceRecord } from "../../wire/message.js";

/** What happens after a rule that matched: `stop` ends the rule list, `continue` goes on to the next rule. */
export type Mode = "stop" | "continue";

/**
 * A change made to the reply on its way back to the client. `record` is the record being rewritten; rules
 * that only touch the message (rcode) set `messageLevel` so they run even when the reply has no records.
 */
export interface ResponseRule {
  readonly messageLevel?: boolean;
  apply(reply: Message, record: ResourceRecord | undefined): void;
}

/**
 * One `rewrite` line. `rewrite` changes the request in place and returns the response rules that undo or
 * extend it in the reply, or undefined when the rule does not match this request.
 */
export interface Rule {
  readonly mode: Mode;
  rewrite(request: Message): ResponseRule[] | undefined;
}

/** A Corefile mistake, worded as upstream words it; setup adds the file, line and `plugin/rewrite:`. */
export class RuleError extends Error {
  override name = "RuleError";
}
