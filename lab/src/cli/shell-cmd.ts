import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Command } from "./command.js";
import { bashCompletion } from "./completion/bash.js";
import { fishCompletion } from "./completion/fish.js";
import { zshCompletion } from "./completion/zsh.js";
import { kubeconfigLabFlag, labEnv, labPath } from "./lab-env.js";

/** What the prompt starts with inside `switchyard-lab shell`. */
export const promptMark = "(switchyard-lab) ";

/**
 * How to start each shell so that, after its own startup files, the prompt is marked and completion is loaded:
 * an rc file of ours that reads the user's first (bash: --rcfile; zsh: ZDOTDIR; fish: -C). Other shells get PS1.
 */
function shellLaunch(shell: string, dir: string, root: Command): { args: string[]; env: NodeJS.ProcessEnv } {
  const name = basename(shell);
  if (name === "bash") {
    writeFileSync(join(dir, "completion.bash"), bashCompletion(root));
    writeFileSync(
      join(dir, "bashrc"),
      `[ -f ~/.bashrc ] && . ~/.bashrc\nPS1='${promptMark}'"\${PS1-\\$ }"\n. '${join(dir, "completion.bash")}'\n`,
    );
    return { args: ["--rcfile", join(dir, "bashrc"), "-i"], env: {} };
  }
  if (name === "zsh") {
    writeFileSync(join(dir, "completion.zsh"), zshCompletion(root));
    writeFileSync(
      join(dir, ".zshrc"),
      `[ -f "$HOME/.zshrc" ] && ZDOTDIR="$HOME" . "$HOME/.zshrc"\nPROMPT='${promptMark}'"$PROMPT"\n` +
        `(( $+functions[compdef] )) || { autoload -Uz compinit && compinit -u; }\n. '${join(dir, "completion.zsh")}'\n`,
    );
    return { args: ["-i"], env: { ZDOTDIR: dir } };
  }
  if (name === "fish") {
    writeFileSync(join(dir, "completion.fish"), fishCompletion(root));
    const prompt =
      "functions -c fish_prompt __switchyard_lab_prompt; " +
      `function fish_prompt; printf '%s' '${promptMark}'; __switchyard_lab_prompt; end; ` +
      `source '${join(dir, "completion.fish")}'`;
    return { args: ["-i", "-C", prompt], env: {} };
  }
  return { args: ["-i"], env: { PS1: `${promptMark}$ ` } };
}

/** `shell`, for the table `root()` returns (its completion is loaded into the shell, hence the function). */
export function shellCommand(root: () => Command): Command {
  return {
    name: "shell",
    group: "Using the lab",
    summary: "a shell with kubectl and switchyard-lab on PATH, KUBECONFIG set, and a marked prompt",
    description:
      "Opens your shell ($SHELL, else /bin/bash) with the project's Node, kubectl and switchyard-lab first on PATH, KUBECONFIG set " +
      "as switchyard-lab kubectl sets it, SWITCHYARD_LAB_SHELL=1, and the prompt starting with " +
      `"${promptMark.trim()}". For bash, zsh and fish your own startup file is read first and completion is ` +
      "loaded. exit leaves it; the exit code is the shell's.",
    flags: [kubeconfigLabFlag],
    examples: ["sudo switchyard-lab shell", "SHELL=/bin/zsh switchyard-lab shell"],
    async run(inv) {
      const e = labEnv(inv.string("state-dir"));
      const shell = process.env.SHELL || "/bin/bash";
      const dir = mkdtempSync(join(tmpdir(), "switchyard-lab-shell-"));
      try {
        const launch = shellLaunch(shell, dir, root());
        console.error(
          `switchyard-lab: ${shell} with kubectl and switchyard-lab on PATH${e.kubeconfig ? ` and KUBECONFIG=${e.kubeconfig}` : ""}; exit to leave`,
        );
        const env = {
          ...process.env,
          ...launch.env,
          PATH: labPath(e, process.env.PATH),
          SWITCHYARD_LAB_SHELL: "1",
          ...(e.kubeconfig ? { KUBECONFIG: e.kubeconfig } : {}),
        };
        return spawnSync(shell, launch.args, { stdio: "inherit", env }).status ?? 1;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
