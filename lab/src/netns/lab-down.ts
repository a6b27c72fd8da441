import { existsSync, rmSync } from "node:fs";
import { down as controlPlaneDown, isOurs, stopProcess } from "@switchyard/testbed/controlplane";
import type { Exec } from "../exec.js";
import { Journal } from "./journal.js";
import { labPaths, readLabState } from "./state.js";
import { realTeardownDeps, teardown } from "./teardown.js";

export interface LabDownResult {
  /** Agents stopped, kernel objects removed, control-plane components stopped. */
  removed: string[];
  /** Anything `ip` refused to remove for another reason than it being gone already. */
  errors: string[];
}

/**
 * Removes what `up` recorded: the node agents (so nothing recreates pods meanwhile), the control plane, then, newest
 * first, every pod and node namespace with the processes inside and the routes and links of the root namespace.
 * Only journaled objects are touched, so another lab or a foreign namespace with a similar name survives.
 */
export async function labDown(
  dir: string,
  opts: { keepFiles?: boolean; exec?: Exec } = {},
): Promise<LabDownResult> {
  const paths = labPaths(dir);
  const state = readLabState(dir);
  const removed: string[] = [];
  for (const agent of state?.agents ?? []) {
    const result = await stopProcess(agent, 5000);
    if (result !== "not-running") removed.push(`${agent.name} (${result})`);
  }
  // The control plane before the bridge its apiserver listens on: stopped after the bridge was gone, the apiserver
  // outlived its 10 s grace and was killed every time (with --shutdown-send-retry-after too); stopped before, it
  // exits within it.
  if (existsSync(paths.controlPlane)) {
    const cp = await controlPlaneDown(paths.controlPlane, true);
    removed.push(
      ...cp.stopped.filter((s) => s.result !== "not-running").map((s) => `${s.name} (${s.result})`),
    );
  }
  const deps = opts.exec ? { ...realTeardownDeps, exec: opts.exec } : realTeardownDeps;
  const torn = await teardown(new Journal(paths.journal).read(), deps);
  removed.push(...torn.undone);
  const survivors = (state?.agents ?? []).filter(isOurs);
  if (survivors.length > 0)
    torn.errors.push(`agents still running: ${survivors.map((a) => a.pid).join(", ")}`);
  if (torn.errors.length > 0) {
    throw new Error(`down left things behind (state kept in ${dir}): ${torn.errors.join("; ")}`);
  }
  if (!opts.keepFiles && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  else rmSync(paths.journal, { force: true });
  return { removed, errors: torn.errors };
}
