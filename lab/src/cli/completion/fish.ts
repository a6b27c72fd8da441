import type { Command } from "../command.js";
import { type CompletionNode, completionNodes, word } from "./nodes.js";

const quote = (text: string) => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;

function flagLines(n: CompletionNode): string[] {
  return n.flags.map((f) => {
    const value = !f.takesValue
      ? ""
      : f.values.length > 0
        ? ` -x -a ${quote(f.values.map(word).join(" "))}`
        : f.files === "dir"
          ? " -x -a '(__fish_complete_directories)'"
          : f.files === "file"
            ? " -r -F"
            : " -x";
    return `complete -c switchyard-lab -n '__switchyard_lab_at ${n.path || "/"}' -l ${word(f.name)}${value} -d ${quote(f.help)}`;
  });
}

function nodeLines(n: CompletionNode): string[] {
  if (n.passthrough) return [];
  const at = `__switchyard_lab_at ${n.path || "/"}`;
  return [
    ...n.subcommands.map(
      (c) => `complete -c switchyard-lab -n '${at}' -f -a ${word(c.name)} -d ${quote(c.summary)}`,
    ),
    ...(n.args.length > 0
      ? [`complete -c switchyard-lab -n '${at}' -f -a ${quote(n.args.map(word).join(" "))}`]
      : []),
    ...flagLines(n),
    ...n.subcommands.map(
      (c) =>
        `complete -c switchyard-lab -n '__switchyard_lab_help_at ${n.path || "/"}' -f -a ${word(c.name)} -d ${quote(c.summary)}`,
    ),
  ];
}

/**
 * The fish completion script: `switchyard-lab completion fish | source`, or saved as
 * ~/.config/fish/completions/switchyard-lab.fish. Same walk as the bash script, from the same table.
 */
export function fishCompletion(root: Command): string {
  const nodes = completionNodes(root);
  const paths = nodes.filter((n) => n.path !== "").map((n) => n.path);
  return `# fish completion for switchyard-lab, generated from its command table by \`switchyard-lab completion fish\`.
# Load it in this shell:  switchyard-lab completion fish | source
function __switchyard_lab_walk
    set -l words (commandline -opc)
    set -l path ""
    set -l help 0
    set -l known ${paths.join(" ")}
    for i in (seq 2 (count $words))
        if test $i -eq 2 -a "$words[$i]" = help
            set help 1
            continue
        end
        if contains -- "$path/$words[$i]" $known
            set path "$path/$words[$i]"
        end
    end
    test -n "$path"; or set path /
    echo $help $path
end
function __switchyard_lab_at
    test (__switchyard_lab_walk) = "0 $argv[1]"
end
function __switchyard_lab_help_at
    test (__switchyard_lab_walk) = "1 $argv[1]"
end
complete -c switchyard-lab -f
${nodes.flatMap(nodeLines).join("\n")}
`;
}
