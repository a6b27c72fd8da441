/** The parsed form of a template, and its rendering back to text as Go's parse tree `String()` does. */

export type Operand =
  | { kind: "field"; path: string[]; pos: number }
  /** `.`: the value `range` and `with` set (the data itself outside them). */
  | { kind: "dot"; pos: number }
  /** `$name` (or `$`, the data), with the field chain after it: `$x.Name` has path ["Name"]. */
  | { kind: "variable"; name: string; path: string[]; pos: number }
  | { kind: "ident"; name: string; pos: number }
  | { kind: "string"; value: string; text: string; pos: number }
  | { kind: "number"; value: bigint; text: string; pos: number }
  | { kind: "bool"; value: boolean; pos: number }
  | { kind: "pipe"; pipe: Pipeline; pos: number };

export interface Command {
  args: Operand[];
  pos: number;
}

export interface Pipeline {
  cmds: Command[];
  pos: number;
  /** `$x := P` (or `$i, $e := P` in a range) declares; with `assign`, `$x = P` sets an existing one. */
  decl?: string[];
  assign?: boolean;
}

/**
 * `{{if P}}`, `{{with P}}` and `{{range P}}`, each `LIST{{else}}ELSE{{end}}`; `{{else if Q}}` and `{{else with Q}}`
 * are an else list holding one more node of the same kind, as Go parses them.
 */
export interface BranchNode {
  kind: "if" | "with" | "range";
  pipe: Pipeline;
  pos: number;
  list: TemplateNode[];
  elseList?: TemplateNode[];
}

export type TemplateNode =
  | { kind: "text"; text: string }
  | { kind: "action"; pipe: Pipeline; pos: number }
  | { kind: "break"; pos: number }
  | { kind: "continue"; pos: number }
  | BranchNode;

export interface ParsedTemplate {
  /** The section it came from (`answer`, `additional`, `authority`): Go's template name. */
  name: string;
  source: string;
  nodes: TemplateNode[];
  /** The tree written back out, which upstream uses as the `template` metric label. */
  text: string;
}

export function operandText(op: Operand): string {
  switch (op.kind) {
    case "field":
      return op.path.map((p) => `.${p}`).join("");
    case "dot":
      return ".";
    case "variable":
      return [op.name, ...op.path].join(".");
    case "ident":
      return op.name;
    case "string":
    case "number":
      return op.text;
    case "bool":
      return String(op.value);
    case "pipe":
      return `(${pipelineText(op.pipe)})`;
  }
}

export function commandText(cmd: Command): string {
  return cmd.args.map(operandText).join(" ");
}

export function pipelineText(pipe: Pipeline): string {
  const decl = pipe.decl ? `${pipe.decl.join(", ")} ${pipe.assign ? "=" : ":="} ` : "";
  return decl + pipe.cmds.map(commandText).join(" | ");
}

/** Actions come out without the blanks inside the braces: `{{ .Name }}` is `{{.Name}}`. */
export function treeText(nodes: readonly TemplateNode[]): string {
  return nodes.map(nodeText).join("");
}

function nodeText(n: TemplateNode): string {
  if (n.kind === "text") return n.text;
  if (n.kind === "action") return `{{${pipelineText(n.pipe)}}}`;
  if (n.kind === "break" || n.kind === "continue") return `{{${n.kind}}}`;
  const otherwise = n.elseList ? `{{else}}${treeText(n.elseList)}` : "";
  return `{{${n.kind} ${pipelineText(n.pipe)}}}${treeText(n.list)}${otherwise}{{end}}`;
}

/** The template's literal text, every action (and the branches of an `if`, `with`, `range`) standing as one blank. */
export function literalText(nodes: readonly TemplateNode[]): string {
  return nodes
    .map((n) => {
      if (n.kind === "text") return n.text;
      if (n.kind === "action" || n.kind === "break" || n.kind === "continue") return " ";
      return ` ${literalText(n.list)} ${literalText(n.elseList ?? [])} `;
    })
    .join("");
}
