import type { ArgSpec, Command, FlagSpec } from "./command.js";

export const program = "switchyard-lab";
const width = 110;

/** Words wrapped to the line width, every line after the first indented by `indent`. */
function wrap(text: string, indent: number, first: number): string {
  const lines: string[] = [];
  let line = "";
  let room = width - first;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== "" && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
      room = width - indent;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${" ".repeat(indent)}`);
}

/** Label/text rows in two columns, the text wrapped under itself. */
export function columns(rows: ReadonlyArray<readonly [string, string]>, minLeft = 0): string {
  const left = Math.max(minLeft, Math.min(Math.max(...rows.map(([l]) => l.length)) + 3, 40));
  return rows
    .map(([label, text]) =>
      label.length + 3 > left
        ? `${label}\n${" ".repeat(left)}${wrap(text, left, left)}`
        : `${label.padEnd(left)}${wrap(text, left, left)}`,
    )
    .join("\n");
}

const argWord = (a: ArgSpec) => {
  const word = a.variadic ? `${a.name}...` : a.name;
  return a.optional ? `[${word}]` : word;
};

/** The command line that names this command, as its usage line starts: `switchyard-lab controlplane up`. */
export function commandLine(path: readonly string[]): string {
  return [program, ...path].join(" ");
}

/** `switchyard-lab logs COMPONENT [flags]`: the command, what it takes, and whether it has flags. */
export function synopsis(cmd: Command, path: readonly string[]): string {
  if (cmd.synopsis) return `${commandLine(path)} ${cmd.synopsis}`;
  const words = [commandLine(path)];
  if (cmd.subcommands?.length) words.push(cmd.run ? "[COMMAND]" : "COMMAND");
  words.push(...(cmd.args ?? []).map(argWord));
  if (cmd.flags?.length) words.push("[flags]");
  return words.join(" ");
}

/** The line every usage error ends with. */
export function usageLine(cmd: Command, path: readonly string[]): string {
  const more = path.length === 0 ? `${program} --help` : `${commandLine(path)} --help`;
  return `Usage: ${synopsis(cmd, path)} (${more} for more)`;
}

function flagRows(cmd: Command, path: readonly string[]): Array<[string, string]> {
  const rows = (cmd.flags ?? []).map((f: FlagSpec): [string, string] => {
    const value = f.value ? ` ${f.choices ? f.choices.join("|") : f.value}` : "";
    const repeat = f.multiple ? " (repeatable)" : "";
    const fallback = f.default === undefined ? "" : ` (default ${f.default})`;
    return [`      --${f.name}${value}`, `${f.help}${repeat}${fallback}`];
  });
  rows.push(["  -h, --help", `help for ${path.at(-1) ?? program}`]);
  return rows;
}

/** Paragraphs (blank-line separated) wrapped to the width; one with line breaks of its own is kept as it is. */
function paragraphs(text: string): string {
  return text
    .split("\n\n")
    .map((p) => (p.includes("\n") ? p : wrap(p, 0, 0)))
    .join("\n\n");
}

function exampleLines(examples: readonly string[]): string {
  return examples.map((line) => `  ${line}`).join("\n");
}

/** `help CMD` and `CMD --help`: what it does, its usage, examples, arguments, subcommands and every flag. */
export function commandHelp(cmd: Command, path: readonly string[]): string {
  const parts = [paragraphs(cmd.description ?? cmd.summary), `Usage:\n  ${synopsis(cmd, path)}`];
  if (cmd.examples?.length) parts.push(`Examples:\n${exampleLines(cmd.examples)}`);
  if (cmd.args?.length) parts.push(`Arguments:\n${columns(cmd.args.map((a) => [`  ${a.name}`, a.help]))}`);
  if (cmd.subcommands?.length)
    parts.push(`Commands:\n${columns(cmd.subcommands.map((c) => [`  ${c.name}`, c.summary]))}`);
  parts.push(`Flags:\n${columns(flagRows(cmd, path))}`);
  if (cmd.subcommands?.length)
    parts.push(`Use "${commandLine(path)} COMMAND --help" for more about a command.`);
  return parts.join("\n\n");
}

/** The top-level help: every command under its group, in the table's order. */
export function rootHelp(root: Command): string {
  const groups = new Map<string, Command[]>();
  for (const c of root.subcommands ?? []) {
    const group = c.group ?? "Other";
    groups.set(group, [...(groups.get(group) ?? []), c]);
  }
  // One column width for every group, so the summaries line up down the page.
  const left = Math.max(...(root.subcommands ?? []).map((c) => c.name.length)) + 5;
  const rows = [...groups].map(
    ([group, cmds]) =>
      `${group}:\n${columns(
        cmds.map((c) => [`  ${c.name}`, c.summary]),
        left,
      )}`,
  );
  return [
    paragraphs(root.description ?? root.summary),
    `Usage:\n  ${program} COMMAND [flags]`,
    ...rows,
    `Flags:\n${columns(flagRows(root, []))}`,
    `Use "${program} help COMMAND" or "${program} COMMAND --help" for a command's flags and examples.\n` +
      `Not on PATH? In a checkout, run it as npx ${program}; ${program} shell opens a shell where it is.`,
  ].join("\n\n");
}
