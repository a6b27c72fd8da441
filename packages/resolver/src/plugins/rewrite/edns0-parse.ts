import { parseUint } from "../../plugin/pkg/parse-uint.js";
import { supportOption } from "../../wire/edns.js";
import { isMetadataVariable, LOCAL_VARIABLES, UNKNOWN_VARIABLES } from "./edns0-data.js";
import { NSID, SUBNET } from "./edns0-opt.js";
import type { Edns0Action } from "./edns0-rules.js";
import { localRule, localVariableRule, nsidRule, subnetRule, unsetRule } from "./edns0-rules.js";
import { goQuote } from "./name-parse.js";
import type { Mode, Rule } from "./rule.js";
import { RuleError } from "./rule.js";

const ACTIONS = new Set(["set", "append", "replace", "unset"]);

/** `edns0 local|nsid|subnet ACTION ...`, the arguments after `edns0`; the checks run in upstream's order. */
export function parseEdns0Rule(mode: Mode, words: readonly string[]): Rule {
  if (words.length < 2) throw new RuleError("too few arguments for an EDNS0 rule");
  const kind = (words[0] as string).toLowerCase();
  const action = (words[1] as string).toLowerCase();
  if (!ACTIONS.has(action)) throw new RuleError(`invalid action: ${goQuote(action)}`);
  if (action === "unset") return parseUnset(mode, kind, words);
  // A trailing `revert` (spelled exactly so) undoes the change in the reply.
  const revert = words.at(-1) === "revert";
  const args = revert ? words.slice(0, -1) : words;
  const act = action as Exclude<Edns0Action, "unset">;
  switch (kind) {
    case "local": {
      if (args.length !== 4) throw new RuleError("EDNS0 local rules require three or four args");
      const code = optionCode(args[2] as string);
      const value = args[3] as string;
      if (value.startsWith("{") && value.endsWith("}")) {
        checkVariable(value);
        return localVariableRule(mode, act, code, value, revert);
      }
      return localRule(mode, act, code, optionData(value), revert);
    }
    case "nsid":
      if (args.length !== 2) throw new RuleError("EDNS0 NSID rules can accept no more than one arg");
      return nsidRule(mode, act, revert);
    case "subnet": {
      if (args.length !== 4) throw new RuleError("EDNS0 subnet rules require three or four args");
      const v4 = maskLength(args[2] as string, 32, "IPv4");
      const v6 = maskLength(args[3] as string, 128, "IPv6");
      return subnetRule(mode, act, v4, v6, revert);
    }
    default:
      throw new RuleError(`invalid rule type ${goQuote(kind)}`);
  }
}

function parseUnset(mode: Mode, kind: string, args: readonly string[]): Rule {
  switch (kind) {
    case "local":
      if (args.length !== 3) throw new RuleError("local unset action requires exactly two arguments");
      return unsetRule(mode, optionCode(args[2] as string));
    case "nsid":
      if (args.length !== 2) throw new RuleError("nsid unset action requires exactly one argument");
      return unsetRule(mode, NSID);
    case "subnet":
      if (args.length !== 2) throw new RuleError("subnet unset action requires exactly one argument");
      return unsetRule(mode, SUBNET);
    default:
      throw new RuleError(`invalid rule type ${goQuote(kind)}`);
  }
}

/**
 * An option code as Go's ParseUint(s, 0, 16) reads it (so `0xffee`, `65518` and `0177756` agree). Upstream
 * registers every `local` code as one the server echoes back, and so does this.
 */
function optionCode(text: string): number {
  const code = parseUint(text, 0, 16);
  if (typeof code === "string") throw new RuleError(code);
  supportOption(Number(code));
  return Number(code);
}

/** `0x` and hex digits are bytes; anything else is taken as its own bytes. */
function optionData(text: string): Buffer {
  if (!text.startsWith("0x")) return Buffer.from(text);
  const hex = text.slice(2);
  const bad = [...hex].findIndex((ch) => !/[0-9a-fA-F]/.test(ch));
  // Go reads pairs, so a bad digit is reported before an odd length unless the odd one is last.
  if (bad >= 0 && (bad < hex.length - (hex.length % 2) || hex.length % 2 === 1)) {
    throw new RuleError(`encoding/hex: invalid byte: ${goRune(hex.codePointAt(bad) as number)}`);
  }
  if (hex.length % 2 === 1) throw new RuleError("encoding/hex: odd length hex string");
  return Buffer.from(hex, "hex");
}

/** Go's %#U: `U+0067 'g'`, without the quoted character when it does not print. */
function goRune(code: number): string {
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  const printable = code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0);
  return printable ? `${hex} '${String.fromCodePoint(code)}'` : hex;
}

function checkVariable(variable: string): void {
  if (UNKNOWN_VARIABLES.has(variable)) {
    throw new RuleError(`variable ${variable} is not supported by this build: the server address is unknown`);
  }
  if (!LOCAL_VARIABLES.has(variable) && !isMetadataVariable(variable)) {
    throw new RuleError(`unsupported variable name ${goQuote(variable)}`);
  }
}

function maskLength(text: string, max: number, family: "IPv4" | "IPv6"): number {
  const bits = parseUint(text, 0, 16);
  if (typeof bits === "string") throw new RuleError(bits);
  if (bits > BigInt(max)) throw new RuleError(`invalid ${family} bit mask length ${bits}`);
  return Number(bits);
}
