import type { Command } from "../command.js";
import { type CompletionFlag, completionNodes, word } from "./nodes.js";
import { type ShellWords, valueArms, walkAndOffer } from "./walk.js";

const bashWords: ShellWords = { wordAt: `"\${COMP_WORDS[i]}"`, first: 1, cursor: "COMP_CWORD", path: "path" };

const words = (ws: readonly string[]) => ws.map(word).join(" ");

/** What bash offers for a flag's value: its choices, words to start it with, folders or files, or nothing. */
function offerValue(f: CompletionFlag): string {
  if (f.values.length > 0)
    return `${f.nospace ? "compopt -o nospace; " : ""}COMPREPLY=($(compgen -W "${words(f.values)}" -- "$cur"))`;
  if (f.files) return `COMPREPLY=($(compgen -${f.files === "dir" ? "d" : "f"} -- "$cur"))`;
  return ":";
}

/**
 * The bash completion script: `source <(switchyard-lab completion bash)`. Generated from the command table, so it
 * offers exactly the commands, flags and values the parser takes.
 */
export function bashCompletion(root: Command): string {
  const nodes = completionNodes(root);
  const paths = nodes.filter((n) => n.path !== "").map((n) => n.path);
  const offers = nodes.map((n) =>
    n.passthrough
      ? `    "${n.path}") return ;;`
      : `    "${n.path}") flags="${words(n.flags.map((f) => `--${f.name}`))}"; subs="${words(n.subcommands.map((c) => c.name))}"; args="${words(n.args)}" ;;`,
  );
  return `# bash completion for switchyard-lab, generated from its command table by \`switchyard-lab completion bash\`.
# Load it in this shell:  source <(switchyard-lab completion bash)
_switchyard_lab() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local path="" help=0 i w flags subs args
  # "--runtime=" arrives as "--runtime" "=" (bash breaks words at "="): the flag is the word before.
  if [[ $cur == "=" ]]; then cur=""; fi
  if [[ $prev == "=" ]]; then prev="\${COMP_WORDS[COMP_CWORD-2]}"; fi
${walkAndOffer(bashWords, paths, valueArms(nodes, offerValue), offers)}
  if [[ $help -eq 1 ]]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  elif [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$subs $args" -- "$cur"))
  fi
}
complete -F _switchyard_lab switchyard-lab
`;
}
