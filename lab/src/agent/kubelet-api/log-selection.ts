import { formatLogTime, type LogLine } from "../cri-log.js";
import type { LogQuery } from "./log-query.js";

/**
 * Turns log lines into the bytes the kubelet sends for a query, in its order: `tailLines` picks the starting line
 * (counted from the end of what is there when the request comes), then lines before `since` are skipped, each
 * kept line gets its timestamp prefix, and output stops after `limitBytes`, cutting the last line if it must.
 * Stateful for `follow`: the lines that arrive later go through the same since and byte budget.
 */
export class LogSelection {
  private remaining: number;

  constructor(private readonly q: Pick<LogQuery, "timestamps" | "sinceMs" | "limitBytes" | "tailLines">) {
    this.remaining = q.limitBytes ?? Number.POSITIVE_INFINITY;
  }

  /** True once limitBytes is spent: nothing more will be written, a follow can end. */
  get exhausted(): boolean {
    return this.remaining <= 0;
  }

  /** The output for the lines already in the log: tailLines applies to these only. */
  initial(lines: readonly LogLine[]): string {
    const start = this.q.tailLines === undefined ? 0 : Math.max(0, lines.length - this.q.tailLines);
    return this.more(lines.slice(start));
  }

  /** The output for lines that arrived while following. */
  more(lines: readonly LogLine[]): string {
    let out = "";
    for (const line of lines) {
      if (this.exhausted) break;
      if (this.q.sinceMs !== undefined && line.time < this.q.sinceMs) continue;
      const text = this.q.timestamps ? `${formatLogTime(line.time)} ${line.text}` : line.text;
      const size = Buffer.byteLength(text);
      if (size > this.remaining) {
        out += cutBytes(text, this.remaining);
        this.remaining = 0;
        break;
      }
      this.remaining -= size;
      out += text;
    }
    return out;
  }
}

/** The first `n` bytes of `text`; a character cut in two is dropped rather than sent half. */
function cutBytes(text: string, n: number): string {
  return Buffer.from(text)
    .subarray(0, n)
    .toString("utf8")
    .replace(/\uFFFD$/, "");
}
