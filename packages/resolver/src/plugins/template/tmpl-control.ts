/**
 * The control actions: `{{if}}`, `{{with}}`, `{{range}}`, their `{{else}}` (and `{{else if}}`, `{{else with}}`),
 * `{{end}}`, `{{break}}` and `{{continue}}`. The lexer's flat list of pieces becomes a tree, with Go's parse
 * errors for branches left open or closed twice, and the variables in scope tracked as Go's parser does.
 */
import type { BranchNode, Pipeline, TemplateNode } from "./tmpl-ast.js";
import type { Piece, Token } from "./tmpl-lex.js";
import { TemplateSyntaxError } from "./tmpl-lex.js";

/** What a pipeline is parsed against: the variables declared so far, and what `.` holds there. */
export interface ParseScope {
  vars: string[];
  /** False where `.` is still the template data (outside every `with` and `range` body). */
  dotRebound: boolean;
  /** The action the pipeline belongs to (`range` may declare two variables), for Go's errors. */
  context: "command" | BranchNode["kind"];
}

type PipelineParser = (tokens: readonly Token[], pos: number, scope: ParseScope) => Pipeline;

/** A branch being read: the node, whether its `{{else}}` was seen, and the variables to drop at its end. */
interface OpenBranch {
  node: BranchNode;
  inElse: boolean;
  /** An `{{else if}}` or `{{else with}}` opens a node that its outer one's `{{end}}` closes too. */
  chained: boolean;
  mark: number;
}

const words = (tokens: readonly Token[]) => tokens.filter((t) => t.kind !== "space");
const BRANCHES = new Set(["if", "with", "range"]);

export function buildTree(pieces: readonly Piece[], parsePipeline: PipelineParser): TemplateNode[] {
  const root: TemplateNode[] = [];
  const open: OpenBranch[] = [];
  const vars = ["$"];
  const target = (): TemplateNode[] => {
    const top = open.at(-1);
    if (!top) return root;
    return top.inElse ? (top.node.elseList as TemplateNode[]) : top.node.list;
  };
  // `.` is rebound inside the body (not the else list) of any enclosing `with` or `range`.
  const dotRebound = () => open.some((b) => !b.inElse && b.node.kind !== "if");
  const scope = (context: ParseScope["context"]): ParseScope => ({ vars, dotRebound: dotRebound(), context });
  const openBranch = (kind: BranchNode["kind"], tokens: readonly Token[], pos: number, chained: boolean) => {
    const mark = vars.length;
    if (words(tokens).length === 0) throw new TemplateSyntaxError(`missing value for ${kind}`, pos);
    const node: BranchNode = { kind, pipe: parsePipeline(tokens, pos, scope(kind)), pos, list: [] };
    target().push(node);
    open.push({ node, inElse: false, chained, mark });
  };
  for (const piece of pieces) {
    if (piece.kind === "text") {
      target().push(piece);
      continue;
    }
    const [first, ...rest] = words(piece.tokens);
    const keyword = first?.kind === "ident" ? first.text : "";
    const after = (t: Token) => piece.tokens.slice(piece.tokens.indexOf(t) + 1);
    if (BRANCHES.has(keyword)) {
      openBranch(keyword as BranchNode["kind"], after(first as Token), (first as Token).pos, false);
    } else if (keyword === "else") {
      const top = open.at(-1);
      if (!top) throw new TemplateSyntaxError("unexpected {{else}}", piece.pos);
      if (top.inElse) throw new TemplateSyntaxError("expected end; found {{else}}", piece.pos);
      top.inElse = true;
      top.node.elseList = [];
      const next = rest[0];
      // `{{else if}}` in an if, `{{else with}}` in a with: one more node of the same kind in the else list.
      if (next?.kind === "ident" && next.text === top.node.kind && top.node.kind !== "range") {
        openBranch(top.node.kind, after(next), next.pos, true);
      } else if (next?.kind === "ident" && BRANCHES.has(next.text)) {
        throw new TemplateSyntaxError(`unexpected <${next.text}> in input`, piece.pos);
      } else if (next) {
        throw new TemplateSyntaxError(`unexpected ${JSON.stringify(next.text)} in else`, piece.pos);
      }
    } else if (keyword === "end") {
      if (rest.length > 0)
        throw new TemplateSyntaxError(`unexpected ${JSON.stringify(rest[0]?.text)} in end`, piece.pos);
      if (open.length === 0) throw new TemplateSyntaxError("unexpected {{end}}", piece.pos);
      // One `{{end}}` closes a node and every `{{else if}}`/`{{else with}}` chained onto it.
      for (;;) {
        const closed = open.pop() as OpenBranch;
        vars.length = closed.mark;
        if (!closed.chained) break;
      }
    } else if (keyword === "break" || keyword === "continue") {
      if (!open.some((b) => b.node.kind === "range" && !b.inElse))
        throw new TemplateSyntaxError(`{{${keyword}}} outside {{range}}`, piece.pos);
      if (rest.length > 0)
        throw new TemplateSyntaxError(
          `unexpected ${JSON.stringify(rest[0]?.text)} in {{${keyword}}}`,
          piece.pos,
        );
      target().push({ kind: keyword, pos: piece.pos });
    } else {
      target().push({
        kind: "action",
        pipe: parsePipeline(piece.tokens, piece.pos, scope("command")),
        pos: piece.pos,
      });
    }
  }
  // Go notices at the end of the input, so the error names the last line.
  if (open.length > 0) throw new TemplateSyntaxError("unexpected EOF", Number.MAX_SAFE_INTEGER);
  return root;
}
