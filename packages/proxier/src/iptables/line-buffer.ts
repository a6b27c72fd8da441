// Lines of iptables-restore input, one rule per line with arguments joined by spaces, as
// kube-proxy's LineBuffer writes them. Arguments that need quoting arrive already quoted.

export type Arg = string | readonly string[];

/** Where rule-writing code puts its lines. */
export interface LineSink {
  /** Appends one line made of the arguments; nested arrays are spliced in place. */
  write(...args: readonly Arg[]): void;
}

function joinArgs(args: readonly Arg[]): string {
  return args.flat().join(" ");
}

export class LineBuffer implements LineSink {
  readonly #lines: string[] = [];

  write(...args: readonly Arg[]): void {
    this.#lines.push(joinArgs(args));
  }

  /** Appends lines an earlier write already joined. */
  append(lines: readonly string[]): void {
    for (const line of lines) this.#lines.push(line);
  }

  get lines(): readonly string[] {
    return this.#lines;
  }

  get length(): number {
    return this.#lines.length;
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
    const line = joinArgs(args);
    this.recorded.push(line);
    this.#target.append([line]);
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
