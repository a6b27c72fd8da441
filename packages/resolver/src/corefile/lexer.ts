import { CorefileError } from "./errors.js";

export interface Token {
  text: string;
  file: string;
  line: number;
  /** Quoted tokens are never braces or comments, whatever they spell. */
  quoted: boolean;
}

/**
 * Splits Corefile text into tokens: blanks separate, `#` starts a comment (outside quotes), double quotes
 * group (with `\"` inside), and a newline ends a line (lines matter: a directive's arguments stop there).
 */
export function tokenize(text: string, file: string): Token[][] {
  const lines: Token[][] = [];
  let current: Token[] = [];
  let word = "";
  let wordLine = 1;
  let quoted = false;
  let inQuotes = false;
  let quoteLine = 1;
  let line = 1;
  const flush = () => {
    if (word !== "" || quoted) current.push({ text: word, file, line: wordLine, quoted });
    word = "";
    quoted = false;
  };
  const endLine = () => {
    flush();
    if (current.length > 0) lines.push(current);
    current = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (inQuotes) {
      if (ch === "\\" && text[i + 1] === '"') {
        word += '"';
        i++;
      } else if (ch === '"') {
        // caddy ends the token at the closing quote: what follows starts another one.
        inQuotes = false;
        flush();
      } else {
        if (ch === "\n") line++;
        word += ch;
      }
      continue;
    }
    // A quote opens a quoted token only at a token's start, as in caddy; inside a word it is a plain character.
    if (ch === '"' && word === "" && !quoted) {
      wordLine = line;
      inQuotes = true;
      quoteLine = line;
      quoted = true;
    } else if (ch === "#" && word === "" && !quoted) {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    } else if (ch === "\n") {
      endLine();
      line++;
    } else if (ch === " " || ch === "\t" || ch === "\r") {
      flush();
    } else {
      if (word === "" && !quoted) wordLine = line;
      word += ch;
    }
  }
  if (inQuotes) throw new CorefileError(file, quoteLine, "unterminated quoted string");
  endLine();
  return lines;
}

/**
 * Replaces `{$VAR}` (and `{$VAR:default}`) with environment values, like Caddy; an unset variable
 * without a default becomes the empty string.
 */
export function substituteEnv(text: string, env: Readonly<Record<string, string | undefined>>): string {
  return text.replace(
    /\{\$([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g,
    (_m, name: string, fallback?: string) => {
      return env[name] ?? fallback ?? "";
    },
  );
}
