import { CorefileError } from "./errors.js";
import type { Token } from "./lexer.js";
import { substituteEnv, tokenize } from "./lexer.js";

/** One line inside a block: a name, its arguments, and an optional nested `{ }` block. */
export interface Stanza {
  name: string;
  args: string[];
  block: Stanza[];
  file: string;
  line: number;
}

export interface ServerBlock {
  /** The keys as written: `.:53`, `example.org`, `dns://cluster.local:1053`. */
  keys: string[];
  stanzas: Stanza[];
  file: string;
  line: number;
}

export interface ParseOptions {
  /** Name used in error messages; default `Corefile`. */
  file?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** Reads a file named by `import`; without it, importing a file is an error. */
  readFile?: (path: string) => string;
}

const MAX_IMPORT_DEPTH = 10;

/** Parses Corefile text into server blocks. Errors name the file and line. */
export function parseCorefile(text: string, options: ParseOptions = {}): ServerBlock[] {
  const file = options.file ?? "Corefile";
  const lines = tokenize(substituteEnv(text, options.env ?? process.env), file);
  const snippets = new Map<string, Token[][]>();
  return new Parser(expandImports(lines, snippets, options, 0), file).serverBlocks();
}

/** Inlines `import` lines: snippets defined as `(name) { ... }` first, otherwise files via readFile. */
function expandImports(
  lines: Token[][],
  snippets: Map<string, Token[][]>,
  options: ParseOptions,
  depth: number,
) {
  if (depth > MAX_IMPORT_DEPTH) {
    const at = lines[0]?.[0];
    throw new CorefileError(at?.file ?? "Corefile", at?.line ?? 0, "imports nested too deeply (a cycle?)");
  }
  const out: Token[][] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as Token[];
    const first = line[0] as Token;
    const snippetName = /^\((.+)\)$/.exec(first.text)?.[1];
    if (snippetName && !first.quoted && line.length === 2 && line[1]?.text === "{") {
      const { body, end } = collectBlock(lines, i);
      snippets.set(snippetName, body);
      i = end;
      continue;
    }
    if (first.text !== "import" || first.quoted) {
      out.push(line);
      continue;
    }
    if (line.length !== 2)
      throw new CorefileError(first.file, first.line, "import takes exactly one argument");
    const target = (line[1] as Token).text;
    const snippet = snippets.get(target);
    if (snippet) {
      out.push(...expandImports(snippet, snippets, options, depth + 1));
    } else if (options.readFile) {
      let text: string;
      try {
        text = options.readFile(target);
      } catch (err) {
        throw new CorefileError(first.file, first.line, `import ${target}: ${(err as Error).message}`);
      }
      const imported = tokenize(substituteEnv(text, options.env ?? process.env), target);
      out.push(...expandImports(imported, snippets, options, depth + 1));
    } else {
      throw new CorefileError(
        first.file,
        first.line,
        `import ${target}: no such snippet, and file imports are off`,
      );
    }
  }
  return out;
}

/** The lines between line `start`'s `{` and its matching `}`; `end` is the closing line. */
function collectBlock(lines: Token[][], start: number): { body: Token[][]; end: number } {
  let depth = 0;
  const body: Token[][] = [];
  for (let i = start; i < lines.length; i++) {
    const line = lines[i] as Token[];
    for (const t of line) {
      if (t.quoted) continue;
      if (t.text === "{") depth++;
      if (t.text === "}") depth--;
    }
    if (i > start && depth > 0) body.push(line);
    if (i > start && depth === 0) return { body, end: i };
  }
  const at = lines[start]?.[0] as Token;
  throw new CorefileError(at.file, at.line, "unexpected end of file: missing '}'");
}

class Parser {
  private index = 0;

  constructor(
    private readonly lines: Token[][],
    private readonly file: string,
  ) {}

  serverBlocks(): ServerBlock[] {
    const blocks: ServerBlock[] = [];
    while (this.index < this.lines.length) {
      const line = this.lines[this.index++] as Token[];
      const first = line[0] as Token;
      const last = line[line.length - 1] as Token;
      const opens = isBrace(last, "{");
      const keyTokens = opens ? line.slice(0, -1) : line;
      if (keyTokens.length === 0)
        throw new CorefileError(first.file, first.line, "a server block needs at least one key");
      const keys = keyTokens
        .flatMap((t) => t.text.split(","))
        .map((k) => k.trim())
        .filter((k) => k !== "");
      for (const t of keyTokens) {
        if (isBrace(t, "{") || isBrace(t, "}"))
          throw new CorefileError(t.file, t.line, `unexpected '${t.text}'`);
      }
      if (!opens) {
        // Caddy allows one block without braces: everything after the keys belongs to it.
        if (blocks.length > 0) {
          throw new CorefileError(
            first.file,
            first.line,
            `expected '{' after server block keys ${keys.join(" ")}`,
          );
        }
        const stanzas = this.stanzas(false);
        blocks.push({ keys, stanzas, file: first.file, line: first.line });
        continue;
      }
      blocks.push({ keys, stanzas: this.stanzas(true), file: first.file, line: first.line });
    }
    if (blocks.length === 0) throw new CorefileError(this.file, 1, "no server blocks");
    return blocks;
  }

  /** Reads stanzas until the closing brace (or the end when `braced` is false). */
  private stanzas(braced: boolean): Stanza[] {
    const out: Stanza[] = [];
    while (this.index < this.lines.length) {
      const line = this.lines[this.index++] as Token[];
      const first = line[0] as Token;
      if (isBrace(first, "}")) {
        if (!braced) throw new CorefileError(first.file, first.line, "unexpected '}'");
        if (line.length > 1) {
          const extra = line[1] as Token;
          throw new CorefileError(extra.file, extra.line, `unexpected '${extra.text}' after '}'`);
        }
        return out;
      }
      if (isBrace(first, "{")) throw new CorefileError(first.file, first.line, "unexpected '{'");
      const last = line[line.length - 1] as Token;
      const opens = line.length > 1 && isBrace(last, "{");
      const argTokens = line.slice(1, opens ? -1 : undefined);
      for (const t of argTokens) {
        if (isBrace(t, "{") || isBrace(t, "}"))
          throw new CorefileError(t.file, t.line, `unexpected '${t.text}'`);
      }
      const stanza: Stanza = {
        name: first.text,
        args: argTokens.map((t) => t.text),
        block: opens ? this.stanzas(true) : [],
        file: first.file,
        line: first.line,
      };
      out.push(stanza);
    }
    if (braced)
      throw new CorefileError(this.file, lastLine(this.lines), "unexpected end of file: missing '}'");
    return out;
  }
}

function isBrace(t: Token, brace: "{" | "}"): boolean {
  return !t.quoted && t.text === brace;
}

function lastLine(lines: Token[][]): number {
  const last = lines[lines.length - 1];
  return last?.[last.length - 1]?.line ?? 1;
}
