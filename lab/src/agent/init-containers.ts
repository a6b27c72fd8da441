// The order a kubelet gives a pod's containers (KEP-753, sidecars GA in v1.33): init containers one after another
// before the main ones, a restartable one (restartPolicy Always, a sidecar) left running beside the rest; on the
// way down the main containers first, then the sidecars in reverse order (kuberuntime_termination_order.go).
import type { Pod } from "kubernetes-types/core/v1.js";
import type { Container, RestartPolicy } from "./container.js";

type PodContainer = NonNullable<Pod["spec"]>["containers"][number];

export const isSidecar = (c: PodContainer) => c.restartPolicy === "Always";

/** A regular init container is run again when it fails, unless the pod's policy is Never; a sidecar always. */
export function initRestartPolicy(c: PodContainer, podPolicy: string | undefined): RestartPolicy {
  if (isSidecar(c)) return "Always";
  return podPolicy === "Never" ? "Never" : "OnFailure";
}

/** A container as the init sequence sees it: its process, and when it first counted as started (undefined: it
 * was never made to run). */
export interface StartedContainer {
  c: Container;
  started: Promise<void> | undefined;
}

/**
 * Runs the init containers in order: each regular one must exit 0 before the next starts (its policy restarts it
 * meanwhile); a sidecar must have started (running, and past its startup probe) and keeps running. False when the
 * main containers must not start: one failed for good, one could not be made (it waits until the pod goes), or the
 * pod is being deleted.
 */
export async function runInitContainers(
  specs: readonly PodContainer[],
  start: (spec: PodContainer) => Promise<StartedContainer>,
  deleting: () => boolean,
): Promise<boolean> {
  for (const spec of specs) {
    if (deleting()) return false;
    const { c, started } = await start(spec);
    if (isSidecar(spec)) {
      // One never made to run has no start to wait for: it waits for its end, as the regular ones below.
      const began = started?.then(() => "started") ?? new Promise<string>(() => {});
      const outcome = await Promise.race([began, c.settled.then(() => "ended")]);
      if (outcome !== "started") return false;
      continue;
    }
    await c.settled;
    if (c.state.terminated?.exitCode !== 0) return false;
  }
  return !deleting();
}

/** Waits for `prereq`, but no longer than `ms`. */
async function untilOrAfter(prereq: Promise<unknown>, ms: number): Promise<void> {
  if (ms <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([prereq, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/**
 * Stops a pod's containers as the kubelet's termination ordering does: every container begins at once (so each
 * one's preStop hook runs from the start), but a sidecar's SIGTERM waits, within what is left of its grace period,
 * until every main container has exited and then each sidecar declared after it, so the sidecars go last and in
 * reverse order. `stop` runs one container's end and calls `waitTurn` with the grace left before its SIGTERM.
 */
export async function stopInOrder<E>(
  main: readonly E[],
  sidecars: readonly E[],
  stop: (entry: E, waitTurn: (leftMs: number) => Promise<void>) => Promise<void>,
): Promise<void> {
  const now = async () => {};
  const mainDone = Promise.all(main.map((e) => stop(e, now)));
  const all: Promise<unknown>[] = [mainDone];
  let before: Promise<unknown> = mainDone;
  for (const e of [...sidecars].reverse()) {
    const prereq = before;
    const done = stop(e, (leftMs) => untilOrAfter(prereq, leftMs));
    all.push(done);
    before = done;
  }
  await Promise.all(all);
}
