import { TemplateSyntaxError } from "./tmpl-lex.js";

const SIMPLE: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  '"': '"',
};

/**
 * Go's strconv.Unquote for the string constants of a template: raw strings as written, interpreted ones
 * with Go's escapes. A `\x` or octal escape becomes the character of that code, which is the byte itself
 * for ASCII (the only bytes a record's text can usefully hold outside quoted TXT data).
 */
export function unquoteGo(text: string, pos: number): string {
  if (text.startsWith("`")) return text.slice(1, -1).replaceAll("\r", "");
  const body = text.slice(1, -1);
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = body[i + 1] ?? "";
    const simple = SIMPLE[e];
    const hex = { x: 2, u: 4, U: 8 }[e];
    if (simple !== undefined) {
      out += simple;
      i++;
    } else if (
      hex !== undefined &&
      /^[0-9a-fA-F]+$/.test(body.slice(i + 2, i + 2 + hex)) &&
      body.length >= i + 2 + hex
    ) {
      out += String.fromCodePoint(Number.parseInt(body.slice(i + 2, i + 2 + hex), 16));
      i += 1 + hex;
    } else if (
      /^[0-7]{3}$/.test(body.slice(i + 1, i + 4)) &&
      Number.parseInt(body.slice(i + 1, i + 4), 8) < 256
    ) {
      out += String.fromCharCode(Number.parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      throw new TemplateSyntaxError(`invalid syntax`, pos);
    }
  }
  return out;
}
