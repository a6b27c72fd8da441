/** JSON lines on stderr (the agent's log file); warnings and errors only unless verbose. */
export class Logger {
  constructor(
    private readonly fields: Record<string, unknown>,
    private readonly verbose = false,
    private readonly write: (line: string) => void = (line) => process.stderr.write(line),
  ) {}

  info(msg: string, extra: Record<string, unknown> = {}): void {
    if (this.verbose) this.emit("info", msg, extra);
  }

  warn(msg: string, extra: Record<string, unknown> = {}): void {
    this.emit("warn", msg, extra);
  }

  error(msg: string, extra: Record<string, unknown> = {}): void {
    this.emit("error", msg, extra);
  }

  private emit(level: string, msg: string, extra: Record<string, unknown>): void {
    this.write(
      `${JSON.stringify({ time: new Date().toISOString(), level, msg, ...this.fields, ...extra })}\n`,
    );
  }
}
