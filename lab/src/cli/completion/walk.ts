import { type CompletionFlag, type CompletionNode, word } from "./nodes.js";

/** Where a shell keeps the words typed so far, and what the generated function calls its variables. */
export interface ShellWords {
  /** The word at index `$i`: `${COMP_WORDS[i]}` in bash, `${words[i]}` in zsh. */
  wordAt: string;
  /** The index of the first word after the command's name (bash counts from 0, zsh from 1). */
  first: number;
  /** The index of the word under the cursor. */
  cursor: string;
  /** The variable holding the path ("path" would be zsh's $PATH array). */
  path: string;
}

/**
 * The part of the bash and zsh functions that is the same in both: walk the words before the cursor (a word
 * naming a subcommand of the path so far extends it; `help` first turns the rest into command names to complete),
 * offer a flag's value when the word before the cursor is a flag that takes one (`valueArms`, each ending in
 * return), then set `flags`, `subs` and `args` for the path (`offers`).
 */
export function walkAndOffer(
  w: ShellWords,
  paths: readonly string[],
  valueArms: readonly string[],
  offers: readonly string[],
): string {
  return `  for ((i = ${w.first}; i < ${w.cursor}; i++)); do
    w=${w.wordAt}
    if [[ $i -eq ${w.first} && $w == help ]]; then help=1; continue; fi
    case "$${w.path}/$w" in
      ${paths.map((p) => `"${p}"`).join("|")}) ${w.path}="$${w.path}/$w" ;;
    esac
  done
  if [[ $help -eq 0 ]]; then
    case "$${w.path} $prev" in
${valueArms.join("\n")}
    esac
  fi
  case "$${w.path}" in
${offers.join("\n")}
    *) return ;;
  esac`;
}

/** `case` arms for the walk, one per flag that takes a value: `"<path> --<flag>") <offer>; return ;;`. */
export function valueArms(nodes: readonly CompletionNode[], offer: (f: CompletionFlag) => string): string[] {
  return nodes.flatMap((n) =>
    n.flags
      .filter((f) => f.takesValue)
      .map((f) => `    "${n.path} --${word(f.name)}") ${offer(f)}; return ;;`),
  );
}
