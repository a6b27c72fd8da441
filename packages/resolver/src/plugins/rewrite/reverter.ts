import type { ResponseWriter } from "../../plugin/handler.js";
import type { Message, Question, ResourceRecord } from "../../wire/message.js";
import type { ResponseRule } from "./rule.js";

/**
 * The reply as the client must see it: the question it asked (resolvers drop replies whose question does
 * not match theirs), and the response rules undone in the reverse of the order they were collected. The
 * reply is copied first, because the plugin that wrote it (cache) may keep it.
 */
export function revertReply(msg: Message, original: Question, rules: readonly ResponseRule[]): Message {
  const copy = (rr: ResourceRecord) => ({ ...rr }) as ResourceRecord;
  const reply: Message = {
    ...msg,
    question: [{ ...original }, ...msg.question.slice(1)],
    answer: msg.answer.map(copy),
    authority: msg.authority.map(copy),
    additional: msg.additional.map(copy),
  };
  if (rules.length === 0) return reply;
  const records = [...reply.authority, ...reply.answer, ...reply.additional];
  for (const rr of records) {
    for (let i = rules.length - 1; i >= 0; i--) rules[i]?.apply(reply, rr);
  }
  // Message-level rules (rcode) would never run on a reply without records through the loop above.
  if (records.length === 0) {
    for (let i = rules.length - 1; i >= 0; i--) {
      const rule = rules[i];
      if (rule?.messageLevel) rule.apply(reply, undefined);
    }
  }
  return reply;
}

/** A writer that reverts every reply written through it. The encoded form is dropped: the reply changed. */
export function revertingWriter(
  w: ResponseWriter,
  original: Question,
  rules: readonly ResponseRule[],
): ResponseWriter {
  return {
    transport: w.transport,
    remote: w.remote,
    write(msg) {
      w.write(revertReply(msg, original, rules));
    },
  };
}
