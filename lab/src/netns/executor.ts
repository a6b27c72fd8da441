import type { Exec } from "../exec.js";
import type { Journal } from "./journal.js";
import type { Step } from "./steps.js";

/** Applies a plan's steps in order, journaling each undo first; stops at the first failure with its one line. */
export async function applySteps(steps: readonly Step[], exec: Exec, journal: Journal): Promise<void> {
  for (const step of steps) {
    if (step.undo) journal.record(step.undo);
    await exec(step.argv);
  }
}
