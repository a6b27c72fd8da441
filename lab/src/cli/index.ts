// The command line as data (`@switchyard/lab/cli`), for the repository's check of every command its docs show:
// the command table, the parser and resolver that read a command line against it, the scenarios'
// `--set` parameters, and a run in this process with its output captured.
export { type CliResult, runMain } from "./captured.js";
export type { Command } from "./command.js";
export { commandTable } from "./commands.js";
export { parseInvocation } from "./parse-args.js";
export { resolveCommand, UnknownCommandError } from "./resolve.js";
export { scenarioParams } from "./scenario-cmd.js";
