import type { PeekedQuery } from "../../wire/peek.js";
import type { Handler } from "../handler.js";

/**
 * The `answerFromWire` of a plugin that the fast path's queries go through untouched (see
 * `Handler.answerFromWire`): the next handler's reply from bytes, except for the queries `fullPathFor` picks,
 * which this plugin must see decoded and so take the full path. It suits a plugin whose `serveDNS` passes such
 * a query on unchanged and leaves the reply alone; a plugin that changes the reply writes its own, and one
 * that must see every query leaves it out. When the next handler has no fast path there is none to pass on
 * to, and the result is undefined, so the server goes the full way at once.
 */
export function passOnFromWire(
  next: Handler | undefined,
  options: { fullPathFor?: (q: PeekedQuery) => boolean } = {},
): Handler["answerFromWire"] {
  const answer = next?.answerFromWire?.bind(next);
  const { fullPathFor } = options;
  if (!answer || !fullPathFor) return answer;
  return (q, ctx) => (fullPathFor(q) ? undefined : answer(q, ctx));
}
