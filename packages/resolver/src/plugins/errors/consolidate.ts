// `consolidate DURATION REGEXP [LEVEL] [show_first]`: errors whose text matches REGEXP are counted instead of
// logged one by one, and every DURATION after the first of a burst one line says how many there were
// (`N errors like 'REGEXP' occurred in last DURATION`), as CoreDNS's errors plugin does.
import { formatGoDuration, goDurationError, parseGoDuration } from "@switchyard/basics";
import { GoRegex, MAX_REGEX_LENGTH } from "../../plugin/go-regex.js";
import { systemTimers, type Timers } from "../../server/timers.js";

export type LogLevel = "error" | "warning" | "info" | "debug";
const LEVELS: readonly LogLevel[] = ["warning", "error", "info", "debug"];

export interface ConsolidatePattern {
  periodMs: number;
  /** The pattern as written: what the summary line quotes (Go's Regexp.String()). */
  source: string;
  re: GoRegex;
  level: LogLevel;
  /** The first error of a burst is logged in full (at `level`), the summary then counts only the rest. */
  showFirst: boolean;
}

/** The pattern, or the message CoreDNS's setup gives for these arguments (`undefined` message: an ArgErr). */
export function parseConsolidate(
  args: readonly string[],
): ConsolidatePattern | { error: string | undefined } {
  if (args.length < 2 || args.length > 4) return { error: undefined };
  const [period = "", source = "", ...rest] = args;
  const periodMs = parseGoDuration(period);
  if (periodMs === undefined) return { error: goDurationError(period) };
  if (source.length > MAX_REGEX_LENGTH)
    return { error: `regex pattern too long: ${source.length} > ${MAX_REGEX_LENGTH}` };
  const re = GoRegex.compile(source);
  if (typeof re === "string") return { error: re };
  let level: LogLevel | undefined;
  let showFirst = false;
  for (const arg of rest) {
    if ((LEVELS as readonly string[]).includes(arg)) {
      if (level) return { error: "multiple log levels specified in consolidate" };
      if (showFirst) return { error: "log level must come before show_first in consolidate" };
      level = arg as LogLevel;
    } else if (arg === "show_first") showFirst = true;
    else return { error: `unknown option in consolidate: ${arg}` };
  }
  return { periodMs, source, re, level: level ?? "error", showFirst };
}

/** Counts matching errors per pattern and writes the summaries; `stop` flushes the ones still pending. */
export class Consolidator {
  readonly #counts: number[];
  readonly #timers: (unknown | undefined)[];
  #stopped = false;

  constructor(
    readonly patterns: readonly ConsolidatePattern[],
    private readonly log: (level: LogLevel, text: string) => void,
    private readonly timers: Timers = systemTimers,
  ) {
    this.#counts = patterns.map(() => 0);
    this.#timers = patterns.map(() => undefined);
  }

  /**
   * Where an error with this text goes: "counted" (nothing to log now), or the level to log it at: the first
   * matching pattern's when it shows the first of a burst or the plugin is stopping, else "error".
   */
  record(text: string): "counted" | LogLevel {
    const i = this.patterns.findIndex((p) => p.re.test(text));
    const p = this.patterns[i];
    if (!p) return "error";
    if (this.#stopped) return p.level;
    this.#counts[i] = (this.#counts[i] ?? 0) + 1;
    if (this.#counts[i] > 1) return "counted";
    this.#timers[i] = this.timers.setTimeout(() => this.#flush(i), p.periodMs);
    return p.showFirst ? p.level : "counted";
  }

  stop(): void {
    this.#stopped = true;
    for (const [i, timer] of this.#timers.entries()) {
      if (timer === undefined) continue;
      this.timers.clearTimeout(timer);
      this.#flush(i);
    }
  }

  #flush(i: number): void {
    const p = this.patterns[i];
    const count = this.#counts[i] ?? 0;
    this.#counts[i] = 0;
    this.#timers[i] = undefined;
    if (!p || count === 0) return;
    if (count > 1 || !p.showFirst)
      this.log(
        p.level,
        `${count} errors like '${p.source}' occurred in last ${formatGoDuration(p.periodMs)}`,
      );
  }
}
