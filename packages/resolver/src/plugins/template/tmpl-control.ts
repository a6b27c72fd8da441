/**
 * The control actions this implementation runs: `{{if}}`, `{{else}}`, `{{else if}}` and `{{end}}`. The
 * lexer's flat list of pieces becomes a tree, with Go's parse errors for branches left open or closed twice.
 */
import type { IfNode, Pipeline, TemplateNode } from "./tmpl-ast.js";
import type { Piece, Token } from "./tmpl-lex.js";
import { TemplateSyntaxError } from "./tmpl-lex.js";

type PipelineParser = (tokens: readonly Token[], pos: number) => Pipeline;

/** An `if` being read: the node, and whether its `{{else}}` was seen (later pieces go to the else list). */
interface OpenIf {
  node: IfNode;
  inElse: boolean;
  /** An `{{else if}}` opens an `if` that its outer one's `{{end}}` closes too. */
  chained: boolean;
}

const words = (tokens: readonly Token[]) => tokens.filter((t) => t.kind !== "space");

export function buildTree(pieces: readonly Piece[], parsePipeline: PipelineParser): TemplateNode[] {
  const root: TemplateNode[] = [];
  const open: OpenIf[] = [];
  const target = (): TemplateNode[] => {
    const top = open.at(-1);
    if (!top) return root;
    return top.inElse ? (top.node.elseList as TemplateNode[]) : top.node.list;
  };
  for (const piece of pieces) {
    if (piece.kind === "text") {
      target().push(piece);
      continue;
    }
    const [first, ...rest] = words(piece.tokens);
    const keyword = first?.kind === "ident" ? first.text : "";
    if (keyword === "if") {
      const node = openIf(piece, parsePipeline);
      target().push(node);
      open.push({ node, inElse: false, chained: false });
    } else if (keyword === "else") {
      const top = open.at(-1);
      if (!top) throw new TemplateSyntaxError("unexpected {{else}}", piece.pos);
      if (top.inElse) throw new TemplateSyntaxError("expected end; found {{else}}", piece.pos);
      top.inElse = true;
      top.node.elseList = [];
      if (rest[0]?.kind === "ident" && rest[0].text === "if") {
        const afterIf = piece.tokens.slice(piece.tokens.indexOf(rest[0]) + 1);
        const node = ifNode(afterIf, rest[0].pos, parsePipeline);
        target().push(node);
        open.push({ node, inElse: false, chained: true });
      } else if (rest.length > 0) {
        throw new TemplateSyntaxError(`unexpected ${JSON.stringify(rest[0]?.text)} in else`, piece.pos);
      }
    } else if (keyword === "end") {
      if (rest.length > 0)
        throw new TemplateSyntaxError(`unexpected ${JSON.stringify(rest[0]?.text)} in end`, piece.pos);
      if (open.length === 0) throw new TemplateSyntaxError("unexpected {{end}}", piece.pos);
      // One `{{end}}` closes an `if` and every `{{else if}}` chained onto it.
      while (open.pop()?.chained);
    } else {
      target().push({ kind: "action", pipe: parsePipeline(piece.tokens, piece.pos), pos: piece.pos });
    }
  }
  // Go notices at the end of the input, so the error names the last line.
  if (open.length > 0) throw new TemplateSyntaxError("unexpected EOF", Number.MAX_SAFE_INTEGER);
  return root;
}

function openIf(piece: Extract<Piece, { kind: "action" }>, parsePipeline: PipelineParser): IfNode {
  const keyword = words(piece.tokens)[0] as Token;
  return ifNode(piece.tokens.slice(piece.tokens.indexOf(keyword) + 1), keyword.pos, parsePipeline);
}

function ifNode(tokens: readonly Token[], pos: number, parsePipeline: PipelineParser): IfNode {
  if (words(tokens).length === 0) throw new TemplateSyntaxError("missing value for if", pos);
  return { kind: "if", pipe: parsePipeline(tokens, pos), pos, list: [] };
}
