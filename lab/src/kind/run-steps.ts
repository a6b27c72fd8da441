import type { Progress } from "@switchyard/testbed/progress";
import type { Exec } from "../exec.js";
import type { KindClusterSpec } from "./provision.js";
import type { KindStep } from "./steps.js";

/** Everything a step touches, injected: tests run the plan against fakes. */
export interface StepDeps {
  exec: Exec;
  /** Creates the cluster's nodes (a ProvisionStep). */
  provision: (spec: KindClusterSpec) => Promise<void>;
  /** Loads images into every node (a LoadStep). */
  loadImages: (images: readonly string[], nodes: readonly string[]) => Promise<void>;
  writeFile: (path: string, content: string) => void;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

/** A step that failed, kept so the caller knows how far `up` got (a cluster to remove, or not). */
export class KindStepError extends Error {
  constructor(
    readonly step: KindStep,
    reason: string,
  ) {
    super(`${step.what} failed: ${reason.split("\n")[0]}`);
  }
}

/**
 * Runs the steps in order and stops at the first failure with one line naming the step. Progress shows each
 * step as it starts and, for polls, what is still missing.
 */
export async function runKindSteps(
  steps: readonly KindStep[],
  deps: StepDeps,
  progress: Progress,
  pollTimeoutMs: number,
): Promise<void> {
  for (const step of steps) {
    progress.update(`${step.phase}: ${step.what}`, true);
    let next: KindStep[] = [];
    try {
      if ("write" in step) deps.writeFile(step.write.path, step.write.content);
      else if ("run" in step) await deps.exec(step.run);
      else if ("provision" in step) await deps.provision(step.provision);
      else if ("load" in step) await deps.loadImages(step.load.images, step.load.nodes);
      else {
        const label = `${step.phase}: ${step.what}`;
        const stdout = await poll(step.poll, step.until, deps, progress, label, pollTimeoutMs);
        next = step.followedBy?.(stdout) ?? [];
      }
    } catch (err) {
      throw new KindStepError(step, (err as Error).message);
    }
    await runKindSteps(next, deps, progress, pollTimeoutMs);
  }
}

async function poll(
  argv: readonly string[],
  until: (stdout: string) => true | string,
  deps: StepDeps,
  progress: Progress,
  label: string,
  timeoutMs: number,
): Promise<string> {
  const deadline = deps.now() + timeoutMs;
  for (;;) {
    const outcome = await deps.exec(argv).then(
      (stdout) => ({ stdout, result: until(stdout) }),
      (err: Error) => ({ stdout: "", result: err.message.split("\n")[0] ?? "" }),
    );
    const { stdout, result } = outcome;
    if (result === true) return stdout;
    if (deps.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s: ${result}`);
    progress.update(`${label}: ${result}`);
    await deps.sleep(1000);
  }
}
