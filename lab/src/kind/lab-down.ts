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
  tools?: Pick<KindTools, "kind">;
  deps?: Pick<StepDeps, "exec">;
  out?: ProgressSink;
}

/** `kind delete cluster` for the lab recorded in `dir`, then the state folder. kind treats a missing cluster as done. */
export async function kindDown(dir: string, o: KindDownOptions = {}): Promise<string[]> {
  const state = readKindState(dir);
  if (!state) return [];
  const paths = kindPaths(dir);
  const kind = o.tools?.kind ?? (await kindToolsOnThisMachine(o.out ?? process.stderr)).kind;
  const exec = o.deps?.exec ?? spawnExec(paths.commandLog);
  for (const step of kindDownSteps(state.input.name, paths, kind)) {
    try {
      await exec(step.run);
    } catch (err) {
      throw new Error(`${step.what} failed (state kept in ${dir}): ${(err as Error).message.split("\n")[0]}`);
    }
  }
  if (!o.keepFiles && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  else rmSync(paths.stateFile, { force: true });
  return [`kind cluster ${state.input.name} (${state.nodes.map((n) => n.name).join(", ")})`];
}
