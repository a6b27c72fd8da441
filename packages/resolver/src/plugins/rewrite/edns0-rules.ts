import type { EdnsOption, Message } from "../../wire/message.js";
import { subnetData, variableData } from "./edns0-data.js";
import {
  isLocalCode,
  NSID,
  removeAddedOption,
  requestOpt,
  restoreReplacedOption,
  SUBNET,
  unsetOption,
} from "./edns0-opt.js";
import type { Mode, RequestState, ResponseRule, Rule } from "./rule.js";

/** `set` replaces or appends, `append` always appends, `replace` only replaces, `unset` removes. */
export type Edns0Action = "set" | "append" | "replace" | "unset";

/** Which request options a rule may replace: its code, and for `local` only options miekg reads as local. */
type Finds = (option: EdnsOption) => boolean;

/**
 * The part the option kinds share. `data` is the option's new value for this request; undefined means the
 * rule does not apply. `appendOnMatch` is upstream's quirk of the plain `local` and `nsid` rules: with
 * `append`, an option already there is no reason to stop, so a second one is added; the variable and subnet
 * rules give up instead.
 */
function optionRule(
  mode: Mode,
  action: Exclude<Edns0Action, "unset">,
  code: number,
  finds: Finds,
  data: (request: Message, state: RequestState) => Buffer | undefined,
  revert: boolean,
  appendOnMatch: boolean,
): Rule {
  return {
    mode,
    rewrite(request, state) {
      const value = data(request, state);
      if (value === undefined) return undefined;
      const opt = requestOpt(request);
      const responses: ResponseRule[] = [];
      const at = opt.options.findIndex(finds);
      const found = opt.options[at];
      if (found) {
        if (action === "replace" || action === "set") {
          if (revert) responses.push(restoreReplacedOption(found));
          opt.options[at] = { code: found.code, data: value };
          return responses;
        }
        if (!appendOnMatch) return undefined;
      }
      if (action === "replace") return undefined;
      opt.options.push({ code, data: value });
      if (revert) responses.push(removeAddedOption(code));
      return responses;
    },
  };
}

/** `unset`: the option goes, and the rule counts as done whether or not it was there. */
export function unsetRule(mode: Mode, code: number): Rule {
  return {
    mode,
    rewrite(request) {
      unsetOption(requestOpt(request), code);
      return [];
    },
  };
}

const localFinds =
  (code: number): Finds =>
  (o) =>
    o.code === code && isLocalCode(o.code);

/** `local ACTION CODE DATA`: fixed bytes. */
export function localRule(
  mode: Mode,
  action: Exclude<Edns0Action, "unset">,
  code: number,
  data: Buffer,
  revert: boolean,
): Rule {
  return optionRule(mode, action, code, localFinds(code), () => data, revert, true);
}

/** `local ACTION CODE {VARIABLE}`: the bytes the variable has in each request. */
export function localVariableRule(
  mode: Mode,
  action: Exclude<Edns0Action, "unset">,
  code: number,
  variable: string,
  revert: boolean,
): Rule {
  const data = (request: Message, state: RequestState) => variableData(variable, request, state);
  return optionRule(mode, action, code, localFinds(code), data, revert, false);
}

/** `nsid ACTION`: an empty NSID option, asking the servers further on to name themselves. */
export function nsidRule(mode: Mode, action: Exclude<Edns0Action, "unset">, revert: boolean): Rule {
  const finds: Finds = (o) => o.code === NSID;
  return optionRule(mode, action, NSID, finds, () => Buffer.alloc(0), revert, true);
}

/** `subnet ACTION V4BITS V6BITS`: an ECS option holding the client's address cut to the prefix. */
export function subnetRule(
  mode: Mode,
  action: Exclude<Edns0Action, "unset">,
  v4Bits: number,
  v6Bits: number,
  revert: boolean,
): Rule {
  const finds: Finds = (o) => o.code === SUBNET;
  const data = (_request: Message, state: RequestState) => subnetData(state.remote, v4Bits, v6Bits);
  return optionRule(mode, action, SUBNET, finds, data, revert, false);
}
