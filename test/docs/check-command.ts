/**
 * Whether a command the docs show would run as shown: a `switchyard-lab` command line held against the CLI's
 * own command table and parser, an `npm run` against the package's scripts. Returns what is wrong, one line
 * each (empty when the command is right). Synopsis placeholders (`DIR`, `<pod>`, `$NODE`, `iptables|nftables`)
 * stand for any value; a choice list is checked choice by choice.
 */

import { didYouMean, suggestionsFor } from "@switchyard/kube/flags";
import { type Command, parseInvocation, resolveCommand, UnknownCommandError } from "@switchyard/lab/cli";
import { labCommandLine } from "../../scripts/lab-args.mjs";
import type { ShownCommand } from "./shown-commands.js";

/** What the check needs to know about the CLI and the packages; the test gives it the real ones. */
export interface CommandFacts {
  /** The CLI's command table (lab/src/cli/commands.ts). */
  readonly root: Command;
  /** `switchyard-lab <path> --help`: its exit code and output. */
  help(path: readonly string[]): Promise<{ code: number; text: string }>;
  /** The `--set` keys of a scenario run, checked by the scenario's own code: the error, or undefined. */
  setProblem(path: readonly string[], sets: readonly string[], full: boolean): string | undefined;
  /** The scripts of the package in `dir` or named `workspace` (the root's when both are absent), or why none. */
  scripts(where: { dir?: string; workspace?: string }): Record<string, string> | string;
}

/** A word that stands for a value in a synopsis rather than being one. */
export function isPlaceholder(word: string): boolean {
  return (
    word.includes("<") ||
    word.startsWith("$") ||
    /^[A-Z][A-Z0-9_]*([|:=.][A-Z0-9_.]*)*$/.test(word) ||
    word.includes("…")
  );
}

function flagName(word: string): string {
  return word.replace(/^-+/, "").split("=")[0] ?? "";
}

const mentions = (text: string, flag: string) =>
  new RegExp(`(^|[^\\w-])${flag.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w-])`).test(text);

/** `help CMD [SUB]`: the words must name a command. */
function helpTargetProblems(root: Command, words: readonly string[]): string[] {
  let at = root;
  for (const w of words) {
    if (isPlaceholder(w)) return [];
    const next = (at.subcommands ?? []).find((c) => c.name === w);
    if (!next) {
      const names = (at.subcommands ?? []).map((c) => c.name);
      return [`help: no command "${w}"${didYouMean(suggestionsFor(w, names))}`];
    }
    at = next;
  }
  return [];
}

/** The words as the parser would get them, each placeholder value replaced by one the flag accepts. */
function concreteWords(cmd: Command, words: readonly string[]): { words: string[]; problems: string[] } {
  const out: string[] = [];
  const problems: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? "";
    if (w === "--") {
      out.push(...words.slice(i));
      break;
    }
    if (w === "--help" || w === "-h") continue;
    const flag = w.startsWith("--") ? (cmd.flags ?? []).find((f) => f.name === flagName(w)) : undefined;
    if (!flag || flag.value === undefined) {
      out.push(w);
      continue;
    }
    const inline = w.includes("=");
    const value = inline ? w.slice(w.indexOf("=") + 1) : words[i + 1];
    if (!inline) i++;
    if (value === undefined) {
      out.push(w);
      continue;
    }
    const options = isPlaceholder(value) ? [] : value.split("|");
    const refused = options.filter((v) => flag.choices && !flag.choices.includes(v));
    for (const v of refused) problems.push(`--${flag.name} takes ${flag.choices?.join(" or ")}, not "${v}"`);
    // The parser then sees an accepted value, so a refused choice is reported once.
    const stand = options.find((v) => !refused.includes(v)) ?? flag.choices?.[0] ?? "x";
    out.push(`--${flag.name}`, stand);
  }
  return { words: out, problems };
}

/** The flags of `words` that `text` (a command's help) does not mention. */
function unmentionedFlags(text: string, words: readonly string[]): string[] {
  const end = words.indexOf("--");
  return (end < 0 ? words : words.slice(0, end))
    .filter((w) => /^--?[a-z]/.test(w) && w !== "--help" && w !== "-h")
    .filter((w) => !mentions(text, w.split("=")[0] ?? w))
    .map((w) => `no flag ${w.split("=")[0]}`);
}

interface Walked {
  cmd: Command;
  path: string[];
  rest: string[];
  /** A placeholder stood where a subcommand goes (`scenario <name>`): these are the commands it may be. */
  anyOf?: readonly Command[];
  problem?: string;
}

/** The command the leading words name, as the CLI's own resolver walks the table. */
function walk(root: Command, words: readonly string[]): Walked {
  try {
    return resolveCommand(root, words);
  } catch (err) {
    if (!(err instanceof UnknownCommandError)) throw err;
    const [w, ...rest] = err.at.rest;
    // A placeholder where a subcommand goes is not a mistake: it may be any of them.
    if (w !== undefined && isPlaceholder(w)) return { ...err.at, rest, anyOf: err.at.cmd.subcommands ?? [] };
    return { ...err.at, problem: err.message };
  }
}

/** What is wrong with `switchyard-lab <words>`. */
export async function labCommandProblems(facts: CommandFacts, words: readonly string[]): Promise<string[]> {
  if (words[0] === "help") return helpTargetProblems(facts.root, words.slice(1));
  const at = walk(facts.root, words);
  if (at.problem) return [at.problem];
  const where = at.path.length === 0 ? "" : `${at.path.join(" ")}: `;
  if (at.anyOf) {
    const helps = await Promise.all(at.anyOf.map((c) => facts.help([...at.path, c.name])));
    return unmentionedFlags(helps.map((h) => h.text).join("\n"), at.rest).map((p) => `${where}${p}`);
  }
  const help = await facts.help(at.path);
  if (help.code !== 0) return [`${where}--help exits ${help.code}`];
  if (at.cmd.passthrough === "all") return [];
  const { words: concrete, problems } = concreteWords(at.cmd, at.rest);
  try {
    const topLevel = (facts.root.subcommands ?? []).map((c) => c.name);
    const inv = parseInvocation(at.cmd, at.path, concrete, topLevel);
    const declares = (name: string) => (at.cmd.flags ?? []).some((f) => f.name === name);
    const sets = declares("set") ? (inv.list("set") ?? []) : [];
    const given = sets.filter((s) => !isPlaceholder(s) && !/^key=/i.test(s));
    if (given.length > 0) {
      const full = declares("full") && inv.bool("full");
      const setProblem = facts.setProblem(at.path, given, full);
      if (setProblem) problems.push(setProblem);
    }
  } catch (err) {
    problems.push(err instanceof Error ? err.message : String(err));
  }
  return problems.map((p) => (p.startsWith(where) ? p : `${where}${p}`));
}

/** What is wrong with a shown command of either kind. */
export async function commandProblems(facts: CommandFacts, shown: ShownCommand): Promise<string[]> {
  if (shown.kind === "lab") return labCommandProblems(facts, shown.words);
  const scripts = facts.scripts({
    ...(shown.dir ? { dir: shown.dir } : {}),
    ...(shown.workspace ? { workspace: shown.workspace } : {}),
  });
  if (typeof scripts === "string") return [scripts];
  const problems = shown.npmFlags.map(
    (f) => `npm run ${shown.script}: npm reads ${f} itself; the script gets it only after "--"`,
  );
  if (!(shown.script in scripts)) {
    const hint = didYouMean(suggestionsFor(shown.script, Object.keys(scripts)));
    return [...problems, `no npm script "${shown.script}"${hint}`];
  }
  const isRootLab = shown.script === "lab" && !shown.dir && !shown.workspace;
  if (!isRootLab) return problems;
  const lab = await labCommandProblems(facts, labCommandLine([...shown.args]));
  return [...problems, ...lab.map((p) => `npm run lab: ${p}`)];
}
