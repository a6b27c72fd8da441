/**
 * Where a bring-up spends its time, step by step, for `up`'s summary and lab.json. Steps may overlap (nodes,
 * image loads and deploys run at once where nothing orders them), so each keeps its own start: the table shows
 * what ran in parallel, and the total is the wall time, not the sum.
 */
export interface StepTime {
  step: string;
  /** Milliseconds from the bring-up's start. */
  startMs: number;
  endMs: number;
}

/** Times steps against an injected clock; `time` records a step even when it fails, so a failed `up` shows how far it got. */
export class StepClock {
  readonly #now: () => number;
  readonly #start: number;
  readonly #times: StepTime[] = [];

  constructor(now: () => number) {
    this.#now = now;
    this.#start = now();
  }

  async time<T>(step: string, run: () => Promise<T>): Promise<T> {
    const startMs = this.#now() - this.#start;
    try {
      return await run();
    } finally {
      this.#times.push({ step, startMs, endMs: this.#now() - this.#start });
    }
  }

  /** The steps in the order they started. */
  get times(): StepTime[] {
    return [...this.#times].sort((a, b) => a.startMs - b.startMs);
  }
}

/** The table `up` prints: each step's start and duration in seconds, widest step name first column. */
export function stepTable(times: readonly StepTime[]): string[] {
  if (times.length === 0) return [];
  const width = Math.max(4, ...times.map((t) => t.step.length)) + 2;
  const seconds = (ms: number) => (ms / 1000).toFixed(1).padStart(7);
  return [
    `${"STEP".padEnd(width)}  START   TOOK`,
    ...times.map((t) => `${t.step.padEnd(width)}${seconds(t.startMs)}${seconds(t.endMs - t.startMs)}`),
  ];
}
