import { didYouMean, suggestionsFor } from "@switchyard/kube/flags";
import type { Command, FlagSpec, Invocation } from "./command.js";
import { UsageError } from "./usage.js";

const BOOL_WORDS: Readonly<Record<string, boolean>> = { true: true, "1": true, false: false, "0": false };

/** What the flags and arguments of one command line say, before the command's own checks. */
interface Parsed {
  values: Map<string, string | boolean | string[]>;
  positionals: string[];
  passthrough: string[];
}

/** `--flag` or `--flag=value` split; undefined for an argument that is not a flag. */
function splitFlag(arg: string): { dashes: string; name: string; value?: string } | undefined {
  const m = /^(--?)([^=]+)(?:=(.*))?$/s.exec(arg);
  if (!m || arg === "-" || /^-\d/.test(arg)) return undefined;
  return { dashes: m[1] ?? "", name: m[2] ?? "", ...(m[3] !== undefined ? { value: m[3] } : {}) };
}

function unknownFlag(where: string, cmd: Command, dashes: string, name: string): UsageError {
  const names = (cmd.flags ?? []).map((f) => f.name);
  if (dashes === "-" && names.includes(name))
    return new UsageError(`${where}unknown shorthand flag -${name}; flags take two dashes: --${name}`);
  const hint = didYouMean(suggestionsFor(name, [...names, "help"]), (s) => `--${s}`);
  return new UsageError(`${where}unknown flag ${dashes}${name}${hint}`);
}

function checkChoice(where: string, flag: FlagSpec, value: string): void {
  if (!flag.choices || flag.choices.includes(value)) return;
  const hint = didYouMean(suggestionsFor(value, flag.choices));
  throw new UsageError(`${where}--${flag.name} must be ${flag.choices.join(" or ")}, got "${value}"${hint}`);
}

function store(parsed: Parsed, flag: FlagSpec, value: string | boolean): void {
  if (!flag.multiple) {
    parsed.values.set(flag.name, value);
    return;
  }
  const list = (parsed.values.get(flag.name) as string[] | undefined) ?? [];
  parsed.values.set(flag.name, [...list, String(value)]);
}

/** Reads one flag at argv[i]; returns how many arguments it took. */
function readFlag(where: string, cmd: Command, parsed: Parsed, argv: readonly string[], i: number): number {
  const split = splitFlag(argv[i] ?? "");
  if (!split) return 0;
  const flag = (cmd.flags ?? []).find((f) => f.name === split.name);
  if (!flag || split.dashes === "-") throw unknownFlag(where, cmd, split.dashes, split.name);
  if (flag.value === undefined) {
    const bool = split.value === undefined ? true : BOOL_WORDS[split.value];
    if (bool === undefined)
      throw new UsageError(`${where}--${flag.name} is true or false, got "${split.value}"`);
    store(parsed, flag, bool);
    return 1;
  }
  const value = split.value ?? argv[i + 1];
  if (value === undefined) throw new UsageError(`${where}flag needs an argument: --${flag.name}`);
  checkChoice(where, flag, value);
  store(parsed, flag, value);
  return split.value === undefined ? 2 : 1;
}

/** Refuses more or fewer positionals than the command's table names. */
function checkPositionals(where: string, cmd: Command, positionals: readonly string[], commands: string[]) {
  const args = cmd.args ?? [];
  const required = args.filter((a) => !a.optional).length;
  const variadic = args.some((a) => a.variadic);
  if (positionals.length < required) {
    const missing = args[positionals.length];
    throw new UsageError(`${where}missing ${missing?.name ?? "argument"} (${missing?.help ?? ""})`);
  }
  const extra = positionals[args.length];
  if (variadic || extra === undefined) return;
  const subcommands = (cmd.subcommands ?? []).map((c) => c.name);
  let hint = didYouMean(suggestionsFor(extra, subcommands));
  if (hint === "" && commands.includes(extra)) hint = `; did you mean "switchyard-lab ${extra}"?`;
  const takes = args.length === 0 ? "it takes no arguments" : `it takes ${args.map((a) => a.name).join(" ")}`;
  throw new UsageError(`${where}unexpected argument "${extra}" (${takes})${hint}`);
}

/**
 * Reads a command line by the command's table: `--flag value`, `--flag=value`, booleans bare or `=true|false`,
 * positionals anywhere, `--` ending the flags. Every mistake is a UsageError naming the command, with a
 * suggestion when one is close; `commands` (the top-level names) lets a stray `down` in `up down` be pointed at.
 */
export function parseInvocation(
  cmd: Command,
  path: readonly string[],
  argv: readonly string[],
  commands: string[] = [],
): Invocation {
  // Messages start with the command they are about ("up: ..."), or nothing at the top level.
  const where = path.length === 0 ? "" : `${path.join(" ")}: `;
  const parsed: Parsed = { values: new Map(), positionals: [], passthrough: [] };
  if (cmd.passthrough === "all") parsed.passthrough.push(...argv);
  else {
    for (let i = 0; i < argv.length; ) {
      const arg = argv[i] ?? "";
      if (arg === "--") {
        const rest = argv.slice(i + 1);
        if (cmd.passthrough === "after-dashdash") parsed.passthrough.push(...rest);
        else parsed.positionals.push(...rest);
        break;
      }
      const took = readFlag(where, cmd, parsed, argv, i);
      if (took === 0) parsed.positionals.push(arg);
      i += Math.max(took, 1);
    }
    checkPositionals(where, cmd, parsed.positionals, commands);
  }
  return invocation(cmd, path, parsed);
}

function invocation(cmd: Command, path: readonly string[], parsed: Parsed): Invocation {
  const declared = (name: string, kind: "string" | "bool" | "list") => {
    const flag = (cmd.flags ?? []).find((f) => f.name === name);
    const actual =
      flag === undefined ? undefined : flag.value === undefined ? "bool" : flag.multiple ? "list" : "string";
    // A run function asking for a flag its table does not declare is a bug in the table, not the user's mistake.
    if (actual !== kind) throw new Error(`${path.join(" ")}: no ${kind} flag --${name} in the command table`);
  };
  return {
    path,
    positionals: parsed.positionals,
    passthrough: parsed.passthrough,
    string(name) {
      declared(name, "string");
      return parsed.values.get(name) as string | undefined;
    },
    bool(name) {
      declared(name, "bool");
      return parsed.values.get(name) === true;
    },
    list(name) {
      declared(name, "list");
      return parsed.values.get(name) as string[] | undefined;
    },
  };
}
