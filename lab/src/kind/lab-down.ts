import { existsSync, rmSync } from "node:fs";
import type { ProgressSink } from "../progress.js";
import { kindToolsOnThisMachine } from "./machine-tools.js";
import { kindPaths } from "./paths.js";
import type { StepDeps } from "./run-steps.js";
import { spawnExec } from "./spawn-exec.js";
import { readKindState } from "./state.js";
import { kindDownSteps } from "./steps.js";
import type { KindTools } from "./tools.js";

export interface KindDownOptions {
  /** Keep the state folder (logs, config, manifests); lab.json goes either way. */
  keepFiles?: boolean;
  tools?: Pick<KindTools, "kind" | "docker">;
  deps?: Pick<StepDeps, "exec">;
  out?: ProgressSink;
}

/**
 * `kind delete cluster` for the lab recorded in `dir`, then kind's Docker network when nothing else is on it,
 * then the state folder. kind treats a missing cluster as done.
 */
export async function kindDown(dir: string, o: KindDownOptions = {}): Promise<string[]> {
  const state = readKindState(dir);
  if (!state) return [];
  const paths = kindPaths(dir);
  const tools = o.tools ?? (await kindToolsOnThisMachine(o.out ?? process.stderr));
  const { kind } = tools;
  const exec = o.deps?.exec ?? spawnExec(paths.commandLog);
  for (const step of kindDownSteps(state.input.name, paths, kind)) {
    try {
      await exec(step.run);
    } catch (err) {
      throw new Error(`${step.what} failed (state kept in ${dir}): ${(err as Error).message.split("\n")[0]}`);
    }
  }
  const network = await removeIdleKindNetwork(exec, tools.docker);
  if (!o.keepFiles && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  else rmSync(paths.stateFile, { force: true });
  return [
    `kind cluster ${state.input.name} (${state.nodes.map((n) => n.name).join(", ")})`,
    ...(network ? [`Docker network ${kindNetwork} (no container left on it)`] : []),
  ];
}

/** The network kind makes for every cluster it creates, and never removes. */
export const kindNetwork = "kind";

/**
 * kind's network goes when no container, running or stopped, is attached to it: another kind cluster (or anything
 * else on it) keeps it. kind makes it again at the next `create`. True when it was removed.
 */
async function removeIdleKindNetwork(exec: Pick<StepDeps, "exec">["exec"], docker: string): Promise<boolean> {
  const exists = await exec([docker, "network", "inspect", "--format", "{{.Name}}", kindNetwork]).then(
    () => true,
    () => false,
  );
  if (!exists) return false;
  const attached = await exec([docker, "ps", "-a", "-q", "--filter", `network=${kindNetwork}`]);
  if (attached.trim() !== "") return false;
  await exec([docker, "network", "rm", kindNetwork]);
  return true;
}
