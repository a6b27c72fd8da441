// The running lab as `explain` and `trace` see it: the scenarios' ScenarioLab, on either runtime. Neither
// command starts workloads of its own images, so a kind lab's image loading is left out.

import type { ProgressSink } from "@switchyard/testbed/progress";
import type { Exec } from "../exec.js";
import { kindToolsOnThisMachine } from "../kind/machine-tools.js";
import { readLabRuntime } from "../netns/state.js";
import { openLab, type ScenarioLab } from "../scenarios/kit/scenario-lab.js";

export async function openLabFor(
  command: string,
  stateDir: string,
  exec: Exec,
  out: ProgressSink,
): Promise<ScenarioLab> {
  const runtime = readLabRuntime(stateDir);
  if (runtime === undefined) throw new Error(`${command}: no lab in ${stateDir}; run switchyard-lab up`);
  const kind =
    runtime === "kind"
      ? { docker: (await kindToolsOnThisMachine(out)).docker, loadImages: async () => {} }
      : undefined;
  return openLab({ stateDir, params: new Map(), out, exec, ...(kind ? { kind } : {}) }, command);
}
