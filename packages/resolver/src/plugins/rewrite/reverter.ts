import type { ResponseWriter } from "../../plugin/handler.js";
import type { Message, Question, ResourceRecord } from "../../wire/message.js";
import type { ResponseRule } from "./rule.js";

/**
 * The reply as the client must see it, before the response rules run: the question it asked (resolvers
 * drop replies whose question does not match theirs). The reply is copied first, because the plugin that
 * wrote it (cache) may keep it.
 */
function restoredCopy(msg: Message, original: Question): Message {
  const copy = (rr: ResourceRecord) => ({ ...rr }) as ResourceRecord;
  const reply: Message = {
    ...msg,
    question: [{ ...original }, ...msg.question.slice(1)],
    answer: msg.answer.map(copy),
    authority: msg.authority.map(copy),
    additional: msg.additional.map(copy),
  };
  if (msg.edns) reply.edns = { ...msg.edns, options: [...msg.edns.options] };
  return reply;
}

/**
 * Every (rule, record) application, in upstream's order: authority, answer, additional, each record with the
 * rules undone in the reverse of the order they were collected. A section is read when its turn comes, so
 * a rule that replaces the answer (cname) does not have the records it added visited again.
 */
function* applications(
  reply: Message,
  rules: readonly ResponseRule[],
): Generator<[ResponseRule, ResourceRecord | undefined]> {
  let sawRecords = false;
  for (const section of ["authority", "answer", "additional"] as const) {
    for (const rr of [...reply[section]]) {
      sawRecords = true;
      for (let i = rules.length - 1; i >= 0; i--) yield [rules[i] as ResponseRule, rr];
    }
  }
  // Message-level rules (rcode) would never run on a reply without records through the loop above.
  if (sawRecords) return;
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i] as ResponseRule;
    if (rule.messageLevel) yield [rule, undefined];
  }
}

/** The reply with the response rules applied; for rules that do not look anything up. */
export function revertReply(msg: Message, original: Question, rules: readonly ResponseRule[]): Message {
  const reply = restoredCopy(msg, original);
  for (const [rule, rr] of applications(reply, rules)) void rule.apply(reply, rr);
  return reply;
}

/** The same, waiting for the rules that look something up (cname). */
async function revertReplyAwaiting(
  msg: Message,
  original: Question,
  rules: readonly ResponseRule[],
): Promise<Message> {
  const reply = restoredCopy(msg, original);
  for (const [rule, rr] of applications(reply, rules)) await rule.apply(reply, rr);
  return reply;
}

/**
 * Rules that added or replaced a request option with `revert` put the client's options back on the request,
 * since the server echoes the request's options in the reply. Upstream restores the rewritten ones once the
 * reply is written; here the reply is shaped after the chain returns, so they stay restored.
 */
function revertRequestOptions(request: Message, rules: readonly ResponseRule[]): void {
  if (!request.edns || !rules.some((r) => r.revertsRequest)) return;
  const copy: Message = { ...request, edns: { ...request.edns, options: [...request.edns.options] } };
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i] as ResponseRule;
    if (rule.revertsRequest) void rule.apply(copy, undefined);
  }
  request.edns = copy.edns;
}

/** A writer that reverts every reply written through it; `flush` waits for replies still being reverted. */
export interface RevertingWriter extends ResponseWriter {
  flush(): Promise<void>;
}

/**
 * A writer that reverts every reply written through it. The encoded form is dropped: the reply changed.
 * When a rule must look something up, replies are reverted in the order written and sent once done, and
 * the handler waits for them with `flush` before it returns.
 */
export function revertingWriter(
  w: ResponseWriter,
  request: Message,
  original: Question,
  rules: readonly ResponseRule[],
): RevertingWriter {
  const awaits = rules.some((r) => r.awaits);
  let pending: Promise<void> = Promise.resolve();
  const send = (reply: Message) => {
    revertRequestOptions(request, rules);
    w.write(reply);
  };
  return {
    transport: w.transport,
    remote: w.remote,
    write(msg) {
      if (!awaits) return send(revertReply(msg, original, rules));
      pending = pending.then(() => revertReplyAwaiting(msg, original, rules)).then(send);
    },
    flush: () => pending,
  };
}
