/**
 * Progress for long work (builds, bring-up). On a terminal one line is redrawn in place; in a log (CI) a line
 * is printed when the step changes or at most every `intervalMs`, so logs stay short but never silent.
 */
export interface ProgressSink {
  write(text: string): void;
  isTTY?: boolean;
}

export class Progress {
  private lastPrinted = 0;
  private lastText = "";
  private readonly startedAt: number;

  constructor(
    private readonly label: string,
    private readonly out: ProgressSink = process.stderr,
    private readonly now: () => number = Date.now,
    private readonly intervalMs = 10_000,
  ) {
    this.startedAt = now();
  }

  elapsedSeconds(): number {
    return Math.round((this.now() - this.startedAt) / 100) / 10;
  }

  update(text: string, force = false): void {
    const line = `[${this.label}] ${text} (${this.elapsedSeconds()}s)`;
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[2K${line}`);
      return;
    }
    const t = this.now();
    if (force || (text !== this.lastText && t - this.lastPrinted >= this.intervalMs)) {
      this.out.write(`${line}\n`);
      this.lastPrinted = t;
      this.lastText = text;
    }
  }

  done(text: string): void {
    const line = `[${this.label}] ${text} in ${this.elapsedSeconds()}s`;
    this.out.write(this.out.isTTY ? `\r\x1b[2K${line}\n` : `${line}\n`);
  }
}
