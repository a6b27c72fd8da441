import { didYouMean, suggestionsFor } from "@switchyard/kube/flags";
import type { Command } from "./command.js";
import { UsageError } from "./usage.js";

/** A command line's command: the table entry, the words that named it, and the arguments left for it. */
export interface Resolved {
  cmd: Command;
  path: string[];
  rest: string[];
}

/** A mistake naming the command, with the deepest command found so far (its usage line ends the error). */
export class UnknownCommandError extends UsageError {
  constructor(
    message: string,
    readonly at: Resolved,
  ) {
    super(message);
  }
}

/**
 * Walks the table along the leading words: `controlplane up --timeout 5` is controlplane → up, with
 * `--timeout 5` left. A word that is not a subcommand ends the walk where the command takes arguments of its
 * own (`conformance compare`, `logs COMPONENT`), and is an unknown command, with suggestions, where it does not.
 */
export function resolveCommand(root: Command, argv: readonly string[]): Resolved {
  let at: Resolved = { cmd: root, path: [], rest: [...argv] };
  for (;;) {
    const [word, ...rest] = at.rest;
    const subcommands = at.cmd.subcommands ?? [];
    if (word === undefined || word.startsWith("-") || subcommands.length === 0) return at;
    const next = subcommands.find((c) => c.name === word);
    if (next) {
      at = { cmd: next, path: [...at.path, word], rest };
      continue;
    }
    if (at.cmd.run) return at;
    const names = subcommands.map((c) => c.name);
    const where = at.path.length === 0 ? "" : `${at.path.join(" ")}: `;
    throw new UnknownCommandError(
      `${where}unknown command "${word}"${didYouMean(suggestionsFor(word, names))}`,
      at,
    );
  }
}

/** Whether the arguments ask for help: -h or --help before any `--` (only first, where arguments pass through). */
export function asksForHelp(cmd: Command, rest: readonly string[]): boolean {
  const isHelp = (a: string | undefined) => a === "--help" || a === "-h";
  if (cmd.passthrough === "all") return isHelp(rest[0]);
  // `--` ends the flags: what follows is an argument, or belongs to someone else.
  const end = rest.indexOf("--");
  return (end < 0 ? rest : rest.slice(0, end)).some(isHelp);
}
