export type LogLevel = "error" | "warn" | "info" | "debug";

const severity: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export type LogFields = Record<string, unknown>;

/** Anything with a `write(string)`; process.stderr by default. */
export interface LogSink {
  write(line: string): unknown;
}

/** One line before it is formatted: its fields merged (the logger's, then the call's) and made printable. */
export interface LogEntry {
  ts: string;
  level: LogLevel;
  msg: string;
  fields: LogFields;
}

/**
 * The calls a library makes on a logger. Logger implements it; a library that only logs through it (the proxier)
 * also takes a test's recording object.
 */
export interface StructuredLogger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** klog's V(n): a logger that writes only at verbosity n or more; plain info when absent. */
  v?(n: number): StructuredLogger;
}

export interface LoggerOptions {
  /** Lowest level written; "info" unless set. */
  level?: LogLevel;
  /**
   * klog-style verbosity: `logger.v(n)` writes only when n <= verbosity.
   * A verbosity of 1 or more also enables "debug".
   */
  verbosity?: number;
  out?: LogSink;
  /** Fields written on every line. */
  fields?: LogFields;
  /** Time source for the `ts` field. */
  now?: () => number;
  /** How an entry is written to `out`, newline included; `jsonLine` unless set (CoreDNS's text, for one). */
  format?: (entry: LogEntry) => string;
}

/**
 * Structured logs, one entry per line: JSON {"ts","level","msg",...fields} unless another format is given.
 * Quiet by default (info). Child loggers carry fixed fields.
 */
export class Logger implements StructuredLogger {
  readonly level: LogLevel;
  readonly verbosity: number;
  readonly #out: LogSink;
  readonly #fields: LogFields;
  readonly #now: () => number;
  readonly #format: (entry: LogEntry) => string;
  readonly #enabled: boolean;

  constructor(options: LoggerOptions = {}, enabled = true) {
    this.verbosity = options.verbosity ?? 0;
    this.level = options.level ?? (this.verbosity > 0 ? "debug" : "info");
    this.#out = options.out ?? process.stderr;
    this.#fields = options.fields ?? {};
    this.#now = options.now ?? Date.now;
    this.#format = options.format ?? jsonLine;
    this.#enabled = enabled;
  }

  #options(): LoggerOptions {
    return {
      level: this.level,
      verbosity: this.verbosity,
      out: this.#out,
      fields: this.#fields,
      now: this.#now,
      format: this.#format,
    };
  }

  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger {
    return new Logger({ ...this.#options(), fields: { ...this.#fields, ...fields } }, this.#enabled);
  }

  /** A logger that writes only when `n` is within the configured verbosity (like klog.V(n)). */
  v(n: number): Logger {
    return new Logger({ ...this.#options(), level: "debug" }, this.#enabled && n <= this.verbosity);
  }

  enabled(level: LogLevel): boolean {
    return this.#enabled && severity[level] <= severity[this.level];
  }

  error(msg: string, fields?: LogFields): void {
    this.#write("error", msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.#write("warn", msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.#write("info", msg, fields);
  }
  debug(msg: string, fields?: LogFields): void {
    this.#write("debug", msg, fields);
  }

  #write(level: LogLevel, msg: string, fields?: LogFields): void {
    if (!this.enabled(level)) return;
    const merged: LogFields = {};
    for (const source of [this.#fields, fields ?? {}]) {
      for (const [key, value] of Object.entries(source)) merged[key] = serialize(value);
    }
    this.#out.write(this.#format({ ts: new Date(this.#now()).toISOString(), level, msg, fields: merged }));
  }
}

/** One JSON object and a newline; a field named ts, level or msg takes that key's place. */
export function jsonLine(entry: LogEntry): string {
  return `${JSON.stringify({ ts: entry.ts, level: entry.level, msg: entry.msg, ...entry.fields })}\n`;
}

// Errors have no enumerable fields, so JSON.stringify would print {}.
function serialize(value: unknown): unknown {
  if (value instanceof Error) return value.message;
  if (typeof value === "bigint") return value.toString();
  return value;
}

/** Maps a `-v` flag to logger options: 0 is info, 1 and above add debug and V(n) lines. */
export function levelFromVerbosity(v: number): LoggerOptions {
  return { verbosity: v, level: v > 0 ? "debug" : "info" };
}

/** A logger that writes nothing; the default when none is injected. */
export const discardLogger: Logger = new Logger({ out: { write: () => true } }, false);
