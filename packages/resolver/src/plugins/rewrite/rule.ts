import type { Peer } from "../../plugin/handler.js";
import type { Transport } from "../../wire/edns.js";
import type { Message, ResourceRecord } from "../../wire/message.js";

/** What happens after a rule that matched: `stop` ends the rule list, `continue` goes on to the next rule. */
export type Mode = "stop" | "continue";

/**
 * A change made to the reply on its way back to the client. `record` is the record being rewritten; rules
 * that only touch the message (rcode) set `messageLevel` so they run even when the reply has no records.
 * A rule that must look something up (cname) sets `awaits` and may return a promise; the reply then waits
 * for it. A rule with `revertsRequest` also runs once on the request's OPT record when the reply is written,
 * so the options echoed to the client are the ones it sent (upstream's requestExtraRevertRule).
 */
export interface ResponseRule {
  readonly messageLevel?: boolean;
  readonly awaits?: boolean;
  readonly revertsRequest?: boolean;
  apply(reply: Message, record: ResourceRecord | undefined): void | Promise<void>;
}

/** Resolves a name through the whole server again (CoreDNS's plugin/pkg/upstream). */
export type Upstream = (name: string, qtype: number) => Promise<Message | undefined>;

/** What a rule may read about the query besides the message: who asked, over what, and on which server. */
export interface RequestState {
  readonly remote: Peer;
  readonly transport: Transport;
  /** The server's label, `dns://:53`; its port is `{server_port}`. */
  readonly server: string;
  readonly upstream?: Upstream;
}

/**
 * One `rewrite` line. `rewrite` changes the request in place and returns the response rules that undo or
 * extend it in the reply, or undefined when the rule does not match this request.
 */
export interface Rule {
  readonly mode: Mode;
  rewrite(request: Message, state: RequestState): ResponseRule[] | undefined;
}

/** A Corefile mistake, worded as upstream words it; setup adds the file, line and `plugin/rewrite:`. */
export class RuleError extends Error {
  override name = "RuleError";
}
