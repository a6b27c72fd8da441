import type { Command } from "../command.js";

/** A flag as completion sees it: whether a value follows, and what to offer for it. */
export interface CompletionFlag {
  name: string;
  help: string;
  /** `--flag VALUE`: the next word is the flag's value, never a command. */
  takesValue: boolean;
  /** Words to offer for the value; `nospace` when they are the start of one ("pods="). */
  values: readonly string[];
  nospace: boolean;
  files?: "dir" | "file";
}

/** One command of the table, by the words that name it ("" for the top level, "/controlplane/up"). */
export interface CompletionNode {
  path: string;
  subcommands: ReadonlyArray<{ name: string; summary: string }>;
  flags: readonly CompletionFlag[];
  /** Words its positional arguments take. */
  args: readonly string[];
  /** Its arguments belong to another program (kubectl): nothing is offered after it. */
  passthrough: boolean;
}

/** Words go into the scripts unquoted; one that would need quoting is a mistake in the table. */
export function word(w: string): string {
  if (!/^[A-Za-z0-9._=/-]+$/.test(w)) throw new Error(`completion: "${w}" is not a plain word`);
  return w;
}

function node(cmd: Command, path: string): CompletionNode {
  const flags: CompletionFlag[] = (cmd.flags ?? []).map((f) => {
    const words = Array.isArray(f.complete) ? (f.complete as readonly string[]) : [];
    return {
      name: f.name,
      help: f.help,
      takesValue: f.value !== undefined,
      values: f.choices ?? words,
      nospace: f.choices === undefined && words.length > 0,
      ...(f.complete === "dir" || f.complete === "file" ? { files: f.complete } : {}),
    };
  });
  flags.push({ name: "help", help: `help for ${cmd.name}`, takesValue: false, values: [], nospace: false });
  return {
    path,
    subcommands: (cmd.subcommands ?? []).map((c) => ({ name: c.name, summary: c.summary })),
    flags,
    args: (cmd.args ?? []).flatMap((a) => a.choices?.() ?? []),
    passthrough: cmd.passthrough === "all",
  };
}

/**
 * Every command of the table, depth first, for the completion scripts. Each script walks the words typed so far:
 * a word naming a subcommand of the path so far extends the path (`help` first makes the rest a path to complete
 * command names for), then it offers the flag's values, the flags, or the subcommands and argument words.
 */
export function completionNodes(root: Command): CompletionNode[] {
  const out: CompletionNode[] = [];
  const visit = (cmd: Command, path: string) => {
    out.push(node(cmd, path));
    for (const c of cmd.subcommands ?? []) visit(c, `${path}/${c.name}`);
  };
  visit(root, "");
  return out;
}
