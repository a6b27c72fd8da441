// Lines of iptables-restore input, one rule per line with arguments joined by spaces, as
// kube-proxy's LineBuffer writes them. Arguments that need quoting arrive already quoted.

export type Arg = string | readonly string[];

export class LineBuffer {
  readonly #lines: string[] = [];

  /** Appends one line made of the arguments; nested arrays are spliced in place. */
  write(...args: readonly Arg[]): void {
    this.#lines.push(args.flat().join(" "));
  }

  get lines(): readonly string[] {
    return this.#lines;
  }

  get length(): number {
    return this.#lines.length;
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
