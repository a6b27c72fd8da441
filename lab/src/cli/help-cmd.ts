import type { Command } from "./command.js";
import { commandHelp, rootHelp } from "./help.js";
import { resolveCommand } from "./resolve.js";
import { UsageError } from "./usage.js";

/** `help [COMMAND...]`, for the table `root()` returns (the table holds this command too, hence the function). */
export function helpCommand(root: () => Command): Command {
  return {
    name: "help",
    group: "Other",
    summary: "help for a command: what it does, its flags with their defaults, examples",
    description:
      "Prints the help of the command named (the same as COMMAND --help), or the list of commands without one.",
    args: [
      { name: "COMMAND", help: "a command, or a command and its subcommand", optional: true, variadic: true },
    ],
    examples: [
      "switchyard-lab help up",
      "switchyard-lab help controlplane up",
      "switchyard-lab help scenario slice-churn",
    ],
    async run(inv) {
      const words = [...inv.positionals];
      if (words.length === 0) {
        console.log(rootHelp(root()));
        return 0;
      }
      const at = resolveCommand(root(), words);
      const [extra] = at.rest;
      if (extra !== undefined) throw new UsageError(`help: "${at.path.join(" ")}" has no command "${extra}"`);
      console.log(commandHelp(at.cmd, at.path));
      return 0;
    },
  };
}
