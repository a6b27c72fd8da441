import { FlagError } from "./flag-error.js";
import type { FlagSet, FlagSpec } from "./flag-spec.js";
import { readValue } from "./read-value.js";
import { didYouMean, suggestionsFor } from "./suggest.js";

export interface ParsedFlags<T> {
  /** The defaults with each flag given written over its field; the last one given wins. */
  readonly values: T;
  /** Names of the flags given, in order, repeats included. */
  readonly given: readonly string[];
  /** What follows the flags (Go's flag.Args()); always empty in the pflag dialect, which refuses it. */
  readonly rest: readonly string[];
}

/** The messages each dialect words its mistakes in (pflag's as kube-proxy's, Go's as CoreDNS's). */
function wording(set: FlagSet<unknown>) {
  const dash = set.dialect === "go" ? "-" : "--";
  // Neither library suggests anything; the suggestion follows their words on the same line. A shorthand given
  // with two dashes (--h) means its flag, not every flag starting with that letter.
  const names = set.flags.map((f) => f.name);
  const hint = (name: string) => {
    const short = set.flags.find((f) => f.shorthand === name)?.name;
    const candidates = short
      ? [short]
      : suggestionsFor(name, names.includes("help") ? names : [...names, "help"]);
    return didYouMean(candidates, (s) => `${dash}${s}`);
  };
  return {
    unknown: (typed: string, name: string) =>
      set.dialect === "go"
        ? `flag provided but not defined: -${name}${hint(name)}`
        : // The name as the flag set reads it, when that may differ from what was typed.
          `unknown flag: ${set.underscoreAsDash ? `--${name}` : typed}${hint(name)}`,
    needsArgument: (name: string) => `flag needs an argument: ${dash}${name}`,
    invalid: (flag: FlagSpec<unknown>, raw: string, why: string) =>
      set.dialect === "go" && flag.kind === "bool"
        ? `invalid boolean value "${raw}" for -${flag.name}`
        : `invalid value "${raw}" for flag ${dash}${flag.name}: ${why}`,
  };
}

/** One argument split into a flag's name and its value (undefined when not written with "="). */
function splitFlag(
  set: FlagSet<unknown>,
  arg: string,
): { name: string; value?: string; oneDash?: boolean } | undefined {
  if (set.dialect === "go") {
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(arg);
    return m?.[1] === undefined || arg === "-" ? undefined : { name: m[1], value: m[2] };
  }
  const m = (
    set.underscoreAsDash ? /^--?([a-z][a-z0-9_-]*)(?:=(.*))?$/s : /^--?([a-z][a-z0-9-]*)(?:=(.*))?$/s
  ).exec(arg);
  if (m?.[1] === undefined) return undefined;
  const name = set.underscoreAsDash ? m[1].replaceAll("_", "-") : m[1];
  return { name, value: m[2], oneDash: !arg.startsWith("--") };
}

type Wording = ReturnType<typeof wording>;

function readFlag(set: FlagSet<unknown>, words: Wording, flag: FlagSpec<unknown>, raw: string): unknown {
  const read = readValue(flag.kind, raw, set.plainBools ?? false);
  if ("invalid" in read) throw new FlagError(words.invalid(flag, raw, flag.invalid ?? read.invalid));
  const why = (flag.check as ((value: unknown) => string | undefined) | undefined)?.(read.value);
  if (why !== undefined) throw new FlagError(words.invalid(flag, raw, why));
  return read.value;
}

/**
 * Reads a command line by the set's dialect: `--name=value`, `--name value`, one dash or two, a shorthand with
 * one (`-h`), and bools (or flags with a `bare` value) given without one. Each value is read and checked as it comes, so the first
 * mistake is the one reported, as both flag libraries do; every mistake is a one-line FlagError naming the flag,
 * and an unknown flag's names the close ones ("did you mean --proxy-mode?").
 */
export function parseFlags<T>(typedSet: FlagSet<T>, argv: readonly string[]): ParsedFlags<T> {
  // Fields are written by name; the table's types already tie each flag's kind to its field.
  const set = typedSet as FlagSet<unknown>;
  const words = wording(set);
  const values = { ...typedSet.defaults } as Record<string, unknown>;
  const given: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (set.dialect === "go" && arg === "--") return { values: values as T, given, rest: argv.slice(i + 1) };
    const split = splitFlag(set, arg);
    if (split === undefined) {
      if (set.dialect === "go") return { values: values as T, given, rest: argv.slice(i) };
      throw new FlagError(`unexpected argument "${arg}": this command takes flags only`);
    }
    const flag = set.flags.find(
      (f) =>
        f.name === split.name || (split.oneDash && set.dialect === "pflag" && f.shorthand === split.name),
    );
    if (flag === undefined) throw new FlagError(words.unknown(arg.split("=")[0] ?? "", split.name));
    let raw = split.value ?? (flag.kind === "bool" ? "true" : flag.bare);
    if (raw === undefined) {
      raw = argv[++i];
      if (raw === undefined) throw new FlagError(words.needsArgument(flag.name));
    }
    const value = readFlag(set, words, flag, raw);
    if (flag.field !== undefined) values[flag.field as string] = value;
    given.push(flag.name);
  }
  return { values: values as T, given, rest: [] };
}
