import { formatVerbs, PRINTF_VERBS } from "./go-fmt.js";
import type { Command, Operand, ParsedTemplate, Pipeline, TemplateNode } from "./tmpl-ast.js";
import { treeText } from "./tmpl-ast.js";
import { buildTree, type ParseScope } from "./tmpl-control.js";
import { FUNCTIONS } from "./tmpl-funcs.js";
import type { Token } from "./tmpl-lex.js";
import { lexTemplate, TemplateSyntaxError } from "./tmpl-lex.js";
import { unquoteGo } from "./unquote.js";

/**
 * A construct Go's text/template has but this implementation does not run. Refusing it at setup keeps a
 * Corefile from loading with a template that would answer differently from CoreDNS.
 */
export class UnsupportedTemplate extends Error {}

/** Go builtins that parse fine in CoreDNS but are not implemented here. */
const UNSUPPORTED_FUNCS = new Set("call html js slice urlquery".split(" "));
/** Keywords that never stand as a value; the control actions are read by buildTree, the rest are not run here. */
const KEYWORDS = new Set("if else end range with define template block break continue nil".split(" "));
/** Fields of the data whose values are Go structs printed with their own formatting, not reproduced. */
const OPAQUE_FIELDS = new Set(["Message"]);

/**
 * Parses `source` as Go's text/template would with upstream's one extra function (`parseInt`). Go's
 * syntax errors come out with Go's wording, `template: answer:1: unclosed action`.
 */
export function parseTemplate(name: string, source: string): ParsedTemplate {
  let pieces: ReturnType<typeof lexTemplate>;
  try {
    pieces = lexTemplate(source);
    const nodes: TemplateNode[] = buildTree(pieces, parsePipeline);
    return { name, source, nodes, text: treeText(nodes) };
  } catch (err) {
    if (err instanceof TemplateSyntaxError) {
      const line = source.slice(0, err.pos).split("\n").length;
      throw new TemplateSyntaxError(`template: ${name}:${line}: ${err.message}`, err.pos);
    }
    throw err;
  }
}

/**
 * A pipeline: its declaration (`$x :=`, `$x =`, in a range `$i, $e :=`), then the commands, split at top-level
 * `|`; parenthesised pipelines nest. Declared variables join the scope after the pipeline, as in Go.
 */
function parsePipeline(tokens: readonly Token[], pos: number, scope: ParseScope): Pipeline {
  const { decl, assign, rest } = declaration(tokens, pos, scope);
  const stages: Token[][] = [[]];
  let depth = 0;
  for (const t of rest) {
    if (t.kind === "lparen") depth++;
    if (t.kind === "rparen" && --depth < 0) throw new TemplateSyntaxError(`unexpected ")" in command`, t.pos);
    if (t.kind === "pipe" && depth === 0) stages.push([]);
    else stages.at(-1)?.push(t);
  }
  if (depth > 0) throw new TemplateSyntaxError("unclosed left paren", pos);
  const cmds = stages.map((stage, i) => {
    const cmd = parseCommand(stage, pos, scope);
    const first = cmd.args[0] as Operand;
    if (i > 0 && first.kind !== "field" && first.kind !== "ident")
      throw new TemplateSyntaxError(`non executable command in pipeline stage ${i + 1}`, first.pos);
    return cmd;
  });
  if (decl && !assign) scope.vars.push(...decl);
  return { cmds, pos: cmds[0]?.pos ?? pos, ...(decl ? { decl, assign } : {}) };
}

/** `$a, $b :=` or `$a =` at the start of a pipeline; only a range may name two variables. */
function declaration(tokens: readonly Token[], pos: number, scope: ParseScope) {
  const words = tokens.filter((t) => t.kind !== "space");
  const names: string[] = [];
  let i = 0;
  while (
    words[i]?.kind === "variable" &&
    (words[i + 1]?.kind === "comma" || words[i + 1]?.kind === "assign")
  ) {
    names.push((words[i] as Token).text);
    if (words[i + 1]?.kind === "assign") {
      const op = words[i + 1] as Token;
      if (names.length > (scope.context === "range" ? 2 : 1))
        throw new TemplateSyntaxError(`too many declarations in ${scope.context}`, pos);
      return { decl: names, assign: op.text === "=", rest: tokens.slice(tokens.indexOf(op) + 1) };
    }
    i += 2;
  }
  return { decl: undefined, assign: false, rest: tokens };
}

/** One command: operands separated by blanks; adjacent `.A.B` fields form one chain, as do `$x.A`. */
function parseCommand(tokens: readonly Token[], pos: number, scope: ParseScope): Command {
  const args: Operand[] = [];
  let i = 0;
  let spaced = true;
  while (i < tokens.length) {
    const t = tokens[i] as Token;
    if (t.kind === "space") {
      spaced = true;
      i++;
      continue;
    }
    const prev = args.at(-1);
    if (!spaced && t.kind === "field" && (prev?.kind === "field" || prev?.kind === "variable")) {
      // Go places a variable's chain at its first field.
      if (prev.kind === "variable" && prev.path.length === 0) prev.pos = t.pos;
      prev.path.push(t.text.slice(1));
      i++;
      continue;
    }
    if (!spaced) throw new TemplateSyntaxError(`unexpected ${JSON.stringify(t.text)} in operand`, t.pos);
    if (t.kind === "lparen") {
      const end = closingParen(tokens, i);
      const inner = parsePipeline(tokens.slice(i + 1, end), t.pos, { ...scope, context: "command" });
      args.push({ kind: "pipe", pipe: inner, pos: t.pos });
      i = end + 1;
    } else {
      args.push(operand(t, scope));
      i++;
    }
    spaced = false;
  }
  const first = args[0];
  if (!first) throw new TemplateSyntaxError("missing value for command", pos);
  // The data struct prints with Go's own formatting (and pointers' addresses), which is not reproduced.
  for (const a of args) {
    if (
      (a.kind === "dot" && !scope.dotRebound) ||
      (a.kind === "variable" && a.name === "$" && a.path.length === 0)
    )
      throw new UnsupportedTemplate(a.kind === "dot" ? "the bare {{ . }} value" : "the bare {{ $ }} value");
    if (a.kind === "variable" && a.name === "$" && OPAQUE_FIELDS.has(a.path[0] ?? ""))
      throw new UnsupportedTemplate(`the .${a.path[0]} field`);
    if (a.kind === "variable" && a.name === "$" && a.path.length === 1 && a.path[0] === "Question")
      throw new UnsupportedTemplate("the bare .Question value");
  }
  // *dns.Question prints through its own String method, which is not reproduced; its fields are, also as the
  // value `with` and `if` test (printing it there fails when run).
  const tested = (scope.context === "with" || scope.context === "if") && args.length === 1;
  if (!tested && args.some((a) => a.kind === "field" && a.path.length === 1 && a.path[0] === "Question"))
    throw new UnsupportedTemplate("the bare .Question value");
  if (first.kind === "ident" && first.name === "printf" && args[1]?.kind === "string") {
    const odd = formatVerbs(args[1].value).find((v) => !PRINTF_VERBS.includes(v));
    if (odd !== undefined) throw new UnsupportedTemplate(`the printf verb %${odd}`);
  }
  return { args, pos: first.pos };
}

function closingParen(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const k = tokens[i]?.kind;
    if (k === "lparen") depth++;
    if (k === "rparen" && --depth === 0) return i;
  }
  return tokens.length;
}

function operand(t: Token, scope: ParseScope): Operand {
  switch (t.kind) {
    case "field": {
      const name = t.text.slice(1);
      if (OPAQUE_FIELDS.has(name)) throw new UnsupportedTemplate(`the .${name} field`);
      return { kind: "field", path: [name], pos: t.pos };
    }
    case "ident":
      return identifier(t);
    case "string":
    case "raw":
      return { kind: "string", value: unquoteGo(t.text, t.pos), text: t.text, pos: t.pos };
    case "number":
      return number(t);
    case "dot":
      return { kind: "dot", pos: t.pos };
    case "variable":
      if (!scope.vars.includes(t.text))
        throw new TemplateSyntaxError(`undefined variable "${t.text}"`, t.pos);
      return { kind: "variable", name: t.text, path: [], pos: t.pos };
    case "char":
      throw new UnsupportedTemplate("character constants");
    default:
      throw new TemplateSyntaxError(`unexpected ${JSON.stringify(t.text)} in command`, t.pos);
  }
}

function identifier(t: Token): Operand {
  if (t.text === "true" || t.text === "false") return { kind: "bool", value: t.text === "true", pos: t.pos };
  if (KEYWORDS.has(t.text)) throw new UnsupportedTemplate(`{{ ${t.text} }}`);
  if (UNSUPPORTED_FUNCS.has(t.text)) throw new UnsupportedTemplate(`the ${t.text} function`);
  if (!Object.hasOwn(FUNCTIONS, t.text))
    throw new TemplateSyntaxError(`function "${t.text}" not defined`, t.pos);
  return { kind: "ident", name: t.text, pos: t.pos };
}

/** Integers in Go's spellings (decimal, 0x, 0o, 0b, a leading 0 for octal, `_` separators). */
function number(t: Token): Operand {
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO]?[0-7_]*|[1-9][0-9_]*)$/.exec(t.text);
  if (!m) {
    if (/^[+-]?[0-9.]+([eE][+-]?[0-9]+)?i?$/.test(t.text))
      throw new UnsupportedTemplate("non-integer numbers");
    throw new TemplateSyntaxError(`bad number syntax: ${JSON.stringify(t.text)}`, t.pos);
  }
  const digits = (m[2] as string).replaceAll("_", "");
  const body = /^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits.replace(/^0[oO]$/, "0");
  const value = BigInt(body) * (m[1] === "-" ? -1n : 1n);
  return { kind: "number", value, text: t.text, pos: t.pos };
}
