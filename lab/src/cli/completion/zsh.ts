import type { Command } from "../command.js";
import { type CompletionFlag, completionNodes, word } from "./nodes.js";
import { type ShellWords, valueArms, walkAndOffer } from "./walk.js";

// "path" would be zsh's $PATH array, hence path_.
const zshWords: ShellWords = { wordAt: `\${words[i]}`, first: 2, cursor: "CURRENT", path: "path_" };

/** A `name:description` item for _describe, single-quoted for zsh. */
const item = (name: string, text: string) => `'${word(name)}:${text.replaceAll("'", "'\\''")}'`;

/** What zsh offers for a flag's value: its choices, words to start it with, folders or files, or a hint. */
function offerValue(f: CompletionFlag): string {
  if (f.values.length > 0) return `compadd ${f.nospace ? "-S '' " : ""}-- ${f.values.map(word).join(" ")}`;
  if (f.files) return `_files${f.files === "dir" ? " -/" : ""}`;
  return "_message 'a value'";
}

/**
 * The zsh completion script (with descriptions): `source <(switchyard-lab completion zsh)` after compinit, or
 * saved as `_switchyard-lab` in a folder of $fpath. Same walk as the bash script, from the same table.
 */
export function zshCompletion(root: Command): string {
  const nodes = completionNodes(root);
  const paths = nodes.filter((n) => n.path !== "").map((n) => n.path);
  const offers = nodes.map((n) =>
    n.passthrough
      ? `    "${n.path}") return ;;`
      : [
          `    "${n.path}")`,
          `      flags=(${n.flags.map((f) => item(`--${f.name}`, f.help)).join(" ")})`,
          `      subs=(${n.subcommands.map((c) => item(c.name, c.summary)).join(" ")})`,
          `      args=(${n.args.map(word).join(" ")}) ;;`,
        ].join("\n"),
  );
  return `#compdef switchyard-lab
# zsh completion for switchyard-lab, generated from its command table by \`switchyard-lab completion zsh\`.
# Load it in this shell (after compinit):  source <(switchyard-lab completion zsh)
_switchyard_lab() {
  local cur=\${words[CURRENT]} prev=\${words[CURRENT-1]}
  local path_="" help=0 i w
  local -a flags subs args
${walkAndOffer(zshWords, paths, valueArms(nodes, offerValue), offers)}
  if [[ $help -eq 1 ]]; then
    _describe -t commands 'command' subs
  elif [[ $cur == -* ]]; then
    _describe -t flags 'flag' flags
  else
    _describe -t commands 'command' subs
    (( \${#args} )) && compadd -- $args
  fi
}
compdef _switchyard_lab switchyard-lab
`;
}
