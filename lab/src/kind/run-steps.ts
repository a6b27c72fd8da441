import type { Progress } from "@switchyard/testbed/progress";
import type { Exec } from "../exec.js";
import type { StepClock } from "../timing/step-times.js";
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

/** How the timing table names a step: its phase and what it does, cut so the table fits a terminal. */
export const stepName = (step: Pick<KindStep, "phase" | "what">): string => {
  const name = `${step.phase}: ${step.what}`;
  return name.length > 60 ? `${name.slice(0, 59)}…` : name;
};

/** Set once a step of a parallel group failed: its sibling lanes start no further step. */
interface Stop {
  now: boolean;
}

/**
 * Runs the steps in order and stops at the first failure with one line naming the step; a ParallelStep's lanes
 * run at once, each in order. Every step is timed on `clock`. Progress shows each step as it starts and, for
 * polls, what is still missing.
 */
export async function runKindSteps(
  steps: readonly KindStep[],
  deps: StepDeps,
  progress: Progress,
  pollTimeoutMs: number,
  clock: StepClock,
  stop: Stop = { now: false },
): Promise<void> {
  for (const step of steps) {
    if (stop.now) return;
    if ("together" in step) {
      await runLanes(step.together, deps, progress, pollTimeoutMs, clock, stop);
      continue;
    }
    const name = stepName(step);
    progress.update(`${step.phase}: ${step.what}`, true);
    let next: KindStep[] = [];
    try {
      next = await clock.time(name, () => runStep(step, deps, progress, pollTimeoutMs));
    } catch (err) {
      throw new KindStepError(step, (err as Error).message);
    }
    await runKindSteps(next, deps, progress, pollTimeoutMs, clock, stop);
  }
}

/**
 * The lanes at once. A failure stops the others at their next step, and is thrown once every lane has settled
 * (nothing keeps running behind the caller's clean-up); where several failed, the first lane's, in plan order:
 * the proxy's rollout, say, rather than a workload that waited on it.
 */
async function runLanes(
  lanes: readonly (readonly KindStep[])[],
  deps: StepDeps,
  progress: Progress,
  pollTimeoutMs: number,
  clock: StepClock,
  stop: Stop,
): Promise<void> {
  const results = await Promise.allSettled(
    lanes.map((lane) =>
      runKindSteps(lane, deps, progress, pollTimeoutMs, clock, stop).catch((err: unknown) => {
        stop.now = true;
        throw err;
      }),
    ),
  );
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}

/** One step; a poll's answer may add steps, which run next. */
async function runStep(
  step: Exclude<KindStep, { together: unknown }>,
  deps: StepDeps,
  progress: Progress,
  pollTimeoutMs: number,
): Promise<KindStep[]> {
  if ("write" in step) deps.writeFile(step.write.path, step.write.content);
  else if ("run" in step) await deps.exec(step.run);
  else if ("provision" in step) await deps.provision(step.provision);
  else if ("load" in step) await deps.loadImages(step.load.images, step.load.nodes);
  else {
    const label = `${step.phase}: ${step.what}`;
    const stdout = await poll(step.poll, step.until, deps, progress, label, pollTimeoutMs);
    return step.followedBy?.(stdout) ?? [];
  }
  return [];
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
