import { CorefileError, CorefileSyntaxError } from "./errors.js";
import type { Token } from "./lexer.js";
import { substituteEnv, tokenize } from "./lexer.js";

/** One line inside a block: a name, its arguments, and an optional nested `{ }` block. */
export interface Stanza {
  name: string;
  args: string[];
  block: Stanza[];
  file: string;
  line: number;
  /**
   * The line of the `}` that closed this stanza's block, set whenever the line opened one, even an empty `{}`:
   * caddy hands setups the braces as tokens, so an empty block still fails where a plugin takes no block.
   */
  blockEnd?: number;
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
    if (line.length === 1)
      throw new CorefileError(
        first.file,
        first.line,
        "Wrong argument count or unexpected line ending after 'import'",
      );
    if (line.length > 2)
      throw new CorefileError(
        first.file,
        first.line,
        "Import takes only one argument (glob pattern or file)",
      );
    const target = (line[1] as Token).text;
    const snippet = snippets.get(target);
    if (snippet) {
      out.push(...expandImports(snippet, snippets, options, depth + 1));
    } else if (options.readFile) {
      let text: string;
      try {
        text = options.readFile(target);
      } catch (err) {
        // caddy's words: a missing file is "not found", anything else could not be imported.
        const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
        const why = missing
          ? `File to import not found: ${target}`
          : `Could not import ${target}: ${(err as Error).message}`;
        throw new CorefileError(first.file, first.line, why);
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
        const stanzas = this.stanzas(0);
        blocks.push({ keys, stanzas, file: first.file, line: first.line });
        continue;
      }
      blocks.push({ keys, stanzas: this.stanzas(1), file: first.file, line: first.line });
    }
    if (blocks.length === 0) throw new CorefileError(this.file, 1, "no server blocks");
    return blocks;
  }

  /** The line of the `}` that closed the block `stanzas(true)` last read. */
  private closedAt = 0;

  /**
   * Reads stanzas until the closing brace; `depth` 0 is a server block without braces (read to the end), 1 a
   * server block's braces, more a plugin's block.
   */
  private stanzas(depth: number): Stanza[] {
    const braced = depth > 0;
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
        this.closedAt = first.line;
        return out;
      }
      if (isBrace(first, "{")) throw new CorefileError(first.file, first.line, "unexpected '{'");
      const last = line[line.length - 1] as Token;
      // `name { }` on one line: an empty block, which caddy reads as the two brace tokens.
      const emptyBlock =
        line.length > 2 && isBrace(last, "}") && isBrace(line[line.length - 2] as Token, "{");
      const opens = !emptyBlock && line.length > 1 && isBrace(last, "{");
      const argTokens = line.slice(1, opens ? -1 : emptyBlock ? -2 : undefined);
      for (const t of argTokens) {
        if (isBrace(t, "{") || isBrace(t, "}"))
          throw new CorefileError(t.file, t.line, `unexpected '${t.text}'`);
      }
      const stanza: Stanza = {
        name: first.text,
        args: argTokens.map((t) => t.text),
        block: opens ? this.stanzas(depth + 1) : [],
        file: first.file,
        line: first.line,
      };
      if (opens) stanza.blockEnd = this.closedAt;
      if (emptyBlock) stanza.blockEnd = last.line;
      out.push(stanza);
    }
    if (braced) this.endOfFile(depth);
    return out;
  }

  /**
   * The file ended inside braces. caddy counts braces token by token: a server block whose last token is a `}`
   * (one that closed a plugin's block) counts as closed; otherwise it wanted a `}` after the last token. Inside a
   * plugin's block the file ended too early.
   */
  private endOfFile(depth: number): void {
    const line = this.lines.at(-1) ?? [];
    const last = line.at(-1);
    if (!last) throw new CorefileError(this.file, 1, "Unexpected EOF");
    if (depth > 1) throw new CorefileError(last.file, last.line, "Unexpected EOF");
    if (!isBrace(last, "}")) throw new CorefileSyntaxError(last.file, last.line, last.text, "}");
  }
}

function isBrace(t: Token, brace: "{" | "}"): boolean {
  return !t.quoted && t.text === brace;
}
