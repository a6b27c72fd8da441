/** One field of a zone-file line; `quoted` fields are TXT character-strings and never names or numbers. */
export interface ZoneField {
  text: string;
  quoted: boolean;
  /** 1-based column of the field, for miekg-style error positions. */
  col: number;
}

export class RecordError extends Error {}

/**
 * Splits the first record of zone-file text into fields as miekg's lexer does: blanks separate, `"..."`
 * groups (escapes kept for the rdata parser), `;` starts a comment, `( )` let a record run over several
 * lines, and the first newline outside parentheses ends the record. `blankStart` says the text began with
 * a blank, which in a zone file means "the previous owner", of which a lone record has none.
 */
export function zoneFields(text: string): { fields: ZoneField[]; blankStart: boolean } {
  const fields: ZoneField[] = [];
  let word = "";
  let start = 0;
  let quoted = false;
  let depth = 0;
  const flush = (at: number) => {
    if (word !== "" || quoted) fields.push({ text: word, quoted, col: start + 1 });
    word = "";
    quoted = false;
    start = at + 1;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "\\" && i + 1 < text.length) {
      if (word === "" && !quoted) start = i;
      word += c + text[++i];
    } else if (c === '"') {
      start = i;
      const end = closingQuote(text, i);
      word = text.slice(i + 1, end);
      quoted = true;
      i = end;
      flush(i);
    } else if (c === ";") {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    } else if (c === "(" || c === ")") {
      flush(i);
      depth += c === "(" ? 1 : -1;
      if (depth < 0) throw new RecordError(`dns: extra closing brace at line: 1:${i + 1}`);
    } else if (c === "\n" && depth === 0) {
      flush(i);
      if (fields.length > 0) break;
    } else if (c === " " || c === "\t" || c === "\r" || c === "\n") {
      flush(i);
    } else {
      if (word === "") start = i;
      word += c;
    }
  }
  if (depth > 0) throw new RecordError("dns: unbalanced brace");
  flush(text.length);
  return { fields, blankStart: /^[ \t]/.test(text) };
}

function closingQuote(text: string, open: number): number {
  for (let j = open + 1; j < text.length; j++) {
    if (text[j] === "\\") j++;
    else if (text[j] === '"') return j;
  }
  throw new RecordError(`dns: unbalanced quotes at line: 1:${open + 1}`);
}
