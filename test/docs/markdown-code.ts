/**
 * The code a Markdown page shows, where a reader would copy a command from: the lines of fenced blocks and the
 * inline code spans of everything else, each with the line it starts on. Pure: text in, snippets out.
 */
export interface CodeSnippet {
  /** 1-based line of the page where the snippet starts. */
  readonly line: number;
  readonly text: string;
}

const fence = /^\s*(`{3,}|~{3,})/;

/**
 * A fenced block's lines, with shell continuations joined: a line ending in `\`, and a synopsis that goes on
 * over indented lines starting with `[` (`controlplane up [--state-dir DIR]` then `   [--apiserver-port 6443]`).
 */
function blockLines(lines: readonly string[], first: number): CodeSnippet[] {
  const out: CodeSnippet[] = [];
  lines.forEach((raw, i) => {
    const prev = out.at(-1);
    if (prev && (prev.text.endsWith("\\") || /^\s+\[/.test(raw))) {
      const joined = `${prev.text.replace(/\\$/, "")} ${raw.trim()}`;
      out[out.length - 1] = { line: prev.line, text: joined };
      return;
    }
    out.push({ line: first + i, text: raw });
  });
  return out;
}

/**
 * The inline code spans of a paragraph (its lines joined: a span may wrap), as CommonMark delimits them: a run
 * of backticks closed by a run of the same length. `\|` inside a span is a table cell's escaped pipe.
 */
function inlineSpans(lines: readonly string[], first: number): CodeSnippet[] {
  const text = lines.join("\n");
  const out: CodeSnippet[] = [];
  const opener = /`+/g;
  for (let m = opener.exec(text); m; m = opener.exec(text)) {
    const ticks = m[0];
    const start = m.index + ticks.length;
    const close = new RegExp(`(?<!\`)${ticks}(?!\`)`, "g");
    close.lastIndex = start;
    const end = close.exec(text);
    if (!end) continue;
    const line = first + (text.slice(0, m.index).match(/\n/g)?.length ?? 0);
    out.push({ line, text: text.slice(start, end.index).replace(/\n/g, " ").replace(/\\\|/g, "|").trim() });
    opener.lastIndex = end.index + ticks.length;
  }
  return out;
}

/** Every code snippet of a Markdown page, in page order. */
export function codeSnippets(markdown: string): CodeSnippet[] {
  const lines = markdown.split("\n");
  const out: CodeSnippet[] = [];
  let i = 0;
  while (i < lines.length) {
    const open = fence.exec(lines[i] ?? "");
    if (open) {
      const marker = open[1] ?? "```";
      let end = i + 1;
      while (end < lines.length && !(lines[end] ?? "").trim().startsWith(marker)) end++;
      out.push(...blockLines(lines.slice(i + 1, end), i + 2));
      i = end + 1;
      continue;
    }
    let end = i;
    while (end < lines.length && (lines[end] ?? "").trim() !== "" && !fence.test(lines[end] ?? "")) end++;
    out.push(...inlineSpans(lines.slice(i, Math.max(end, i + 1)), i + 1));
    i = Math.max(end, i + 1);
  }
  return out;
}

/** A fenced block whole: its info string's first word (the language) and the rest, and its lines. */
export interface FencedBlock {
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly language: string;
  /** The info string after the language, trimmed. */
  readonly info: string;
  readonly body: string;
}

/** Every fenced block of a Markdown page, in page order, closed as `codeSnippets` closes them. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split("\n");
  const out: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = fence.exec(lines[i] ?? "");
    if (!open) continue;
    const marker = open[1] ?? "```";
    const [language = "", ...rest] = (lines[i] ?? "").trim().slice(marker.length).trim().split(/\s+/);
    let end = i + 1;
    while (end < lines.length && !(lines[end] ?? "").trim().startsWith(marker)) end++;
    out.push({ line: i + 1, language, info: rest.join(" "), body: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return out;
}
