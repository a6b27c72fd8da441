import type { Progress } from "@switchyard/testbed/progress";

/**
 * What a scenario changed, undone newest first when it ends, also after a failure: every step runs even when
 * an earlier one fails, and the failures come back as one line each (so a report can say what was left).
 */
export class Undo {
  private readonly steps: { what: string; fn: () => Promise<unknown> }[] = [];

  push(what: string, fn: () => Promise<unknown>): void {
    this.steps.push({ what, fn });
  }

  async run(progress?: Progress): Promise<string[]> {
    const failed: string[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      progress?.update(`restoring: ${step.what}`, true);
      try {
        await step.fn();
      } catch (err) {
        failed.push(`${step.what}: ${(err as Error).message}`);
      }
    }
    return failed;
  }
}
