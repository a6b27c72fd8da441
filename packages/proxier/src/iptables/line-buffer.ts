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

// Lines are written straight into UTF-8 buffers outside the JS heap. At 10k Services a sync
// writes ~400k rules (31 MiB): kept as strings, or joined into chunk strings, the text was
// flattened and copied by the garbage collector again and again, over a third of the render.
// A line built by a template is a rope; writing it into a buffer reads the rope in place.
const CHUNK_BYTES = 1 << 16;
// UTF-8 needs at most 3 bytes per UTF-16 unit, so a line of n units surely fits in 3n + 1.
const MAX_BYTES_PER_UNIT = 3;

export class LineBuffer implements LineSink {
  readonly #chunks: Buffer[] = [];
  #current: Buffer | undefined;
  #used = 0;
  #count = 0;

  write(...args: readonly Arg[]): void {
    this.line(joinArgs(args));
  }

  line(text: string): void {
    const worst = text.length * MAX_BYTES_PER_UNIT + 1;
    let current = this.#current;
    if (current === undefined || current.length - this.#used < worst) {
      this.#flush();
      current = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, worst));
      this.#current = current;
    }
    this.#used += current.write(text, this.#used);
    current[this.#used++] = 0x0a;
    this.#count++;
  }

  /** Appends lines an earlier write already joined. */
  append(lines: readonly string[]): void {
    for (const line of lines) this.line(line);
  }

  #flush(): void {
    if (this.#current === undefined || this.#used === 0) return;
    this.#chunks.push(this.#current.subarray(0, this.#used));
    this.#current = undefined;
    this.#used = 0;
  }

  /** Every line, each ending in a newline. */
  get text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }

  /** The same text as UTF-8 pieces, for writers that need no single string (a pipe). */
  get chunks(): readonly Buffer[] {
    this.#flush();
    return this.#chunks;
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
