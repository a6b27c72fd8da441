import type { Edns, EdnsOption, Message } from "../../wire/message.js";
import type { ResponseRule } from "./rule.js";

export const NSID = 3;
export const SUBNET = 8;

/**
 * The option codes miekg/dns decodes into a type of their own. Every other code is an EDNS0_LOCAL, and only
 * those are what upstream's `local` rules find in the request.
 */
const TYPED_CODES = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 18, 19]);

export const isLocalCode = (code: number): boolean => !TYPED_CODES.has(code);

/** The request's OPT record, made as miekg's SetEdns0(4096, false) makes it when the client sent none. */
export function requestOpt(request: Message): Edns {
  request.edns ??= { udpSize: 4096, version: 0, dnssecOk: false, options: [] };
  return request.edns;
}

/** Drops every option with `code`. */
export function unsetOption(edns: Edns, code: number): void {
  edns.options = edns.options.filter((o) => o.code !== code);
}

/**
 * With `revert`, an option the rule added is taken out again: from the reply's own OPT once per record, and
 * from the request's before the reply is shaped, so the client is not echoed an option it never sent.
 */
export function removeAddedOption(code: number): ResponseRule {
  return {
    revertsRequest: true,
    apply(message) {
      const options = message.edns?.options;
      const at = options?.findIndex((o) => o.code === code) ?? -1;
      if (options && at >= 0) options.splice(at, 1);
    },
  };
}

/** With `revert`, an option the rule replaced gets its old value back (first option with the code only). */
export function restoreReplacedOption(old: EdnsOption): ResponseRule {
  return {
    revertsRequest: true,
    apply(message) {
      const options = message.edns?.options;
      const at = options?.findIndex((o) => o.code === old.code) ?? -1;
      if (options && at >= 0) options[at] = { code: old.code, data: old.data };
    },
  };
}
