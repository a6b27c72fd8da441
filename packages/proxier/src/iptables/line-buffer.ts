// Lines of iptables-restore input, one rule per line with arguments joined by spaces, as
// kube-proxy's LineBuffer writes them. Arguments that need quoting arrive already quoted.

export type Arg = string | readonly string[];

/** Where rule-writing code puts its lines. */
export interface LineSink {
  /** Appends one line made of the arguments; nested arrays are spliced in place. */
  write(...args: readonly Arg[]): void;
  /** Appends one line already joined (the hot paths build it with one template). */
  line(text: string): void;
}

// A plain loop: Array.prototype.flat() then join() allocated two arrays per rule and was
// the renderer's hottest function at 10k Services.
function joinArgs(args: readonly Arg[]): string {
  let line = "";
  let first = true;
  for (const arg of args) {
    const parts = typeof arg === "string" ? [arg] : arg;
    for (const part of parts) {
      line = first ? part : `${line} ${part}`;
      first = false;
    }
  }
  return line;
}

// Lines are gathered in chunks of flat strings. At 10k Services a sync writes ~400k rules; kept
// as separate strings (or one rope of them) every piece survived the young generation and
// scavenges copied tens of megabytes per sync. A flattened chunk is one object, allocated where
// large objects live, so the pieces die young instead.
const CHUNK_CHARS = 1 << 14;

/** Forces V8 to turn a rope into one sequential string (ToNumber flattens its argument). */
function flatten(text: string): string {
  Number(text);
  return text;
}

export class LineBuffer implements LineSink {
  readonly #chunks: string[] = [];
  #pending = "";
  #count = 0;

  write(...args: readonly Arg[]): void {
    this.line(joinArgs(args));
  }

  line(text: string): void {
    this.#pending += `${text}\n`;
    this.#count++;
    if (this.#pending.length >= CHUNK_CHARS) this.#flush();
  }

  /** Appends lines an earlier write already joined. */
  append(lines: readonly string[]): void {
    for (const line of lines) this.line(line);
  }

  #flush(): void {
    if (this.#pending === "") return;
    this.#chunks.push(flatten(this.#pending));
    this.#pending = "";
  }

  /** Every line, each ending in a newline. */
  get text(): string {
    this.#flush();
    return this.#chunks.join("");
  }

  get lines(): readonly string[] {
    return this.#count === 0 ? [] : this.text.slice(0, -1).split("\n");
  }

  get length(): number {
    return this.#count;
  }
}

/** Writes through to a buffer and keeps a copy, so a later sync can replay the lines. */
export class RecordingSink implements LineSink {
  readonly #target: LineBuffer;
  readonly recorded: string[] = [];

  constructor(target: LineBuffer) {
    this.#target = target;
  }

  write(...args: readonly Arg[]): void {
    this.line(joinArgs(args));
  }

  line(text: string): void {
    this.recorded.push(text);
    this.#target.line(text);
  }
}

/** The declaration that creates (or, with --noflush, flushes) a chain. */
export function chainLine(chain: string): string {
  return `:${chain} - [0:0]`;
}

/** Quotes a comment the way kube-proxy does: wrapped in double quotes, not escaped. */
export function quoted(text: string): string {
  return `"${text}"`;
}

/** 1/n with ten decimals (Go's "%0.10f"), the probability of the rule for the n-th-last endpoint. */
export function probability(n: number): string {
  return (1 / n).toFixed(10);
}
