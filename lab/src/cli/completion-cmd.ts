import { didYouMean, suggestionsFor } from "@switchyard/kube/flags";
import type { Command } from "./command.js";
import { bashCompletion } from "./completion/bash.js";
import { fishCompletion } from "./completion/fish.js";
import { zshCompletion } from "./completion/zsh.js";
import { UsageError } from "./usage.js";

const scripts = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion } as const;
type Shell = keyof typeof scripts;

/** `completion SHELL`, for the table `root()` returns (the table holds this command too, hence the function). */
export function completionCommand(root: () => Command): Command {
  return {
    name: "completion",
    group: "Other",
    summary: "a shell completion script for bash, zsh or fish, generated from the command table",
    description:
      "Prints a completion script for the shell named: commands, subcommands, flags, the values of flags that " +
      "take a fixed set (--runtime, --proxy-mode, ...), scenario names and their --set keys, folders for " +
      "--state-dir. switchyard-lab shell loads it for you (bash, zsh, fish).",
    args: [{ name: "SHELL", help: "bash, zsh or fish", choices: () => Object.keys(scripts) }],
    examples: [
      "source <(switchyard-lab completion bash)",
      "# zsh, after compinit",
      "source <(switchyard-lab completion zsh)",
      "switchyard-lab completion fish | source",
      "# for every new bash",
      "switchyard-lab completion bash > ~/.local/share/bash-completion/completions/switchyard-lab",
    ],
    async run(inv) {
      const [shell = ""] = inv.positionals;
      const make = scripts[shell as Shell];
      if (!make) {
        const hint = didYouMean(suggestionsFor(shell, Object.keys(scripts)));
        throw new UsageError(`completion: no script for "${shell}"${hint || "; say bash, zsh or fish"}`);
      }
      process.stdout.write(make(root()));
      return 0;
    },
  };
}
