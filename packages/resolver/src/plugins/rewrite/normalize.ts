import type { Message } from "../../wire/message.js";
import { fqdn } from "../../wire/name.js";

/** A name from the Corefile as upstream compares it: absolute and lower case. */
export function normalizeName(name: string): string {
  return fqdn(name).toLowerCase();
}

/** The question name rules match against: lower case, as upstream's request state gives it. */
export function questionName(request: Message): string {
  return (request.question[0]?.name ?? ".").toLowerCase();
}

/**
 * Points the request at a new question name. The question object is replaced rather than edited, so the
 * original (kept by the reverter) stays intact.
 */
export function setQuestionName(request: Message, name: string): void {
  const q = request.question[0];
  if (q) request.question[0] = { ...q, name };
}
