/**
 * The lexing half of Go's text/template, for the templates upstream's users write: text, and actions
 * `{{ ... }}` with trim markers (`{{- ` and ` -}}`) and comments. Tokens carry their offset
 * in the template, which error messages turn into `line:column` as Go does.
 */

export type TokenKind =
  | "field" // .Name (one element; the parser joins adjacent ones into a chain)
  | "dot"
  | "ident"
  | "string"
  | "raw"
  | "number"
  | "char"
  | "variable"
  | "pipe"
  | "lparen"
  | "rparen"
  | "assign"
  | "comma"
  | "space";

export interface Token {
  kind: TokenKind;
  text: string;
  pos: number;
}

/** Text between actions, or one action's tokens (spaces kept: the parser needs them to split chains). */
export type Piece = { kind: "text"; text: string } | { kind: "action"; tokens: Token[]; pos: number };

export class TemplateSyntaxError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(message);
  }
}

const SPACE = /[ \t\r\n]/;

/** Splits a template into text and actions, applying trim markers. */
export function lexTemplate(src: string): Piece[] {
  const pieces: Piece[] = [];
  let i = 0;
  for (;;) {
    const open = src.indexOf("{{", i);
    if (open < 0) {
      if (i < src.length) pieces.push({ kind: "text", text: src.slice(i) });
      return pieces;
    }
    let text = src.slice(i, open);
    let at = open + 2;
    if (src[at] === "-" && SPACE.test(src[at + 1] ?? "")) {
      text = text.replace(/[ \t\r\n]+$/, "");
      at += 2;
    }
    if (text !== "") pieces.push({ kind: "text", text });
    const { tokens, end, trimRight } = lexAction(src, at, open);
    if (tokens) pieces.push({ kind: "action", tokens, pos: open });
    i = end;
    if (trimRight) while (i < src.length && SPACE.test(src[i] as string)) i++;
  }
}

/** Where an action's closing delimiter starts at `i`: `}}`, or ` -}}` (which also trims what follows). */
function closesAt(src: string, i: number): { len: number; trim: boolean } | undefined {
  if (src.startsWith("}}", i)) return { len: 2, trim: false };
  if (SPACE.test(src[i] ?? "") && src.startsWith("-}}", i + 1)) return { len: 4, trim: true };
  return undefined;
}

/** One action from just after `{{`; comments produce no tokens. */
function lexAction(
  src: string,
  start: number,
  open: number,
): { tokens: Token[] | undefined; end: number; trimRight: boolean } {
  if (src.startsWith("/*", start)) {
    const stop = src.indexOf("*/", start + 2);
    if (stop < 0) throw new TemplateSyntaxError("unclosed comment", open);
    const close = closesAt(src, stop + 2);
    if (!close) throw new TemplateSyntaxError("comment ends before closing delimiter", open);
    return { tokens: undefined, end: stop + 2 + close.len, trimRight: close.trim };
  }
  const tokens: Token[] = [];
  let i = start;
  for (;;) {
    const close = closesAt(src, i);
    if (close) return { tokens, end: i + close.len, trimRight: close.trim };
    if (i >= src.length) throw new TemplateSyntaxError("unclosed action", open);
    const token = lexToken(src, i);
    tokens.push(token);
    i = token.pos + token.text.length;
  }
}

const SINGLE: Record<string, TokenKind> = { "|": "pipe", "(": "lparen", ")": "rparen", ",": "comma" };

function lexToken(src: string, i: number): Token {
  const ch = src[i] as string;
  const take = (kind: TokenKind, re: RegExp): Token => {
    re.lastIndex = i;
    const m = re.exec(src);
    return { kind, text: m?.[0] ?? ch, pos: i };
  };
  if (SPACE.test(ch)) return take("space", /[ \t\r\n]+/y);
  const single = SINGLE[ch];
  if (single) return { kind: single, text: ch, pos: i };
  if (ch === '"') return quoted(src, i, '"', "string");
  if (ch === "`") return quoted(src, i, "`", "raw");
  if (ch === "'") return quoted(src, i, "'", "char");
  if (src.startsWith(":=", i)) return { kind: "assign", text: ":=", pos: i };
  if (ch === "=") return { kind: "assign", text: "=", pos: i };
  if (ch === "$") return take("variable", /\$[\p{L}\p{N}_]*/uy);
  if (ch === "." && /[\p{L}_]/u.test(src[i + 1] ?? "")) return take("field", /\.[\p{L}\p{N}_]+/uy);
  if (/[0-9]/.test(ch) || (/[+\-.]/.test(ch) && /[0-9]/.test(src[i + 1] ?? "")))
    return take("number", /[+-]?[0-9a-zA-Z_.]+(?:[eEpP][+-][0-9_]+)?[0-9a-zA-Z_.]*/y);
  if (ch === ".") return { kind: "dot", text: ".", pos: i };
  if (/[\p{L}_]/u.test(ch)) return take("ident", /[\p{L}\p{N}_]+/uy);
  throw new TemplateSyntaxError(`unexpected ${JSON.stringify(ch)} in command`, i);
}

/** A quoted token up to its unescaped closing quote (raw strings have no escapes). */
function quoted(src: string, i: number, quote: string, kind: TokenKind): Token {
  for (let j = i + 1; j < src.length; j++) {
    const c = src[j];
    if (c === "\\" && quote !== "`") j++;
    else if (c === "\n" && quote !== "`") break;
    else if (c === quote) return { kind, text: src.slice(i, j + 1), pos: i };
  }
  const what = quote === "`" ? "raw quote" : quote === "'" ? "char constant" : "quoted string";
  throw new TemplateSyntaxError(`unterminated ${what}`, i);
}
