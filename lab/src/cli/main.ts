import { commandTable } from "./commands.js";
import { commandHelp, rootHelp, usageLine } from "./help.js";
import { parseInvocation } from "./parse-args.js";
import { asksForHelp, type Resolved, resolveCommand, UnknownCommandError } from "./resolve.js";
import { UsageError } from "./usage.js";
import { versionLines } from "./version-cmd.js";

/**
 * The lab's command line, dispatched from the command table (commands.ts). Help goes to stdout with exit 0; a
 * mistake in the command line is one line naming it, then the command's usage line, exit 2; a failure while
 * running is one line, exit 1. A bare `switchyard-lab` prints the top-level help and exits 0, as kind and
 * kubectl do (cobra prints a command's help when it is given nothing to run).
 */
export async function main(argv: string[]): Promise<number> {
  const root = commandTable;
  let at: Resolved = { cmd: root, path: [], rest: argv };
  try {
    at = resolveCommand(root, argv);
    const { cmd, path, rest } = at;
    if (path.length === 0 && rest.length === 0) {
      console.log(rootHelp(root));
      return 0;
    }
    if (asksForHelp(cmd, rest)) {
      console.log(path.length === 0 ? rootHelp(root) : commandHelp(cmd, path));
      return 0;
    }
    const topLevel = (root.subcommands ?? []).map((c) => c.name);
    const inv = parseInvocation(cmd, path, rest, topLevel);
    if (path.length === 0 && inv.bool("version")) {
      console.log(versionLines().join("\n"));
      return 0;
    }
    if (!cmd.run) {
      const names = (cmd.subcommands ?? []).map((c) => c.name);
      const where = path.length === 0 ? "" : `${path.join(" ")}: `;
      throw new UsageError(`${where}name a command: ${names.join(", ")}`);
    }
    return await cmd.run(inv);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    console.error(`switchyard-lab: ${message}`);
    if (!(err instanceof UsageError)) return 1;
    const where = err instanceof UnknownCommandError ? err.at : at;
    console.error(usageLine(where.cmd, where.path));
    return 2;
  }
}
