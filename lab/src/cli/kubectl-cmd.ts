import { spawnSync } from "node:child_process";
import { dirname } from "node:path";
import { readState } from "../controlplane/controlplane.js";
import { defaultStateDir } from "../controlplane/options.js";
import { defaultLabDir, readLabState } from "../netns/state.js";
import { cacheBinDir, missingBinariesMessage, resolveBinary } from "../upstream/binaries.js";

function labEnv(): { kubectl: string; kubeconfig: string | undefined } {
  const kubectl = resolveBinary("kubectl").path;
  if (!kubectl) throw new Error(missingBinariesMessage(["kubectl"], cacheBinDir()));
  // A lab cluster, when one is up, wins over a bare control plane.
  const lab = readLabState(process.env.SWITCHYARD_LAB_DIR ?? defaultLabDir())?.kubeconfig;
  const dir = process.env.SWITCHYARD_STATE_DIR ?? defaultStateDir();
  return { kubectl, kubeconfig: lab || readState(dir)?.kubeconfig };
}

/** kubectl with the lab's kubeconfig, for attendees who have no kubectl of their own. */
export async function kubectlCommand(args: string[]): Promise<number> {
  const { kubectl, kubeconfig } = labEnv();
  const env = { ...process.env, ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}) };
  const result = spawnSync(kubectl, args, { stdio: "inherit", env });
  return result.status ?? 1;
}

/** Lines for `eval "$(switchyard-lab env)"`. */
export async function envCommand(_args: string[]): Promise<number> {
  const { kubectl, kubeconfig } = labEnv();
  console.log(`export PATH="${dirname(kubectl)}:$PATH"`);
  if (kubeconfig) console.log(`export KUBECONFIG="${kubeconfig}"`);
  else console.error("# no control plane is running: KUBECONFIG not set (switchyard-lab controlplane up)");
  return 0;
}

export async function shellCommand(_args: string[]): Promise<number> {
  const { kubectl, kubeconfig } = labEnv();
  const shell = process.env.SHELL || "/bin/bash";
  console.error(
    `switchyard-lab: ${shell} with kubectl on PATH${kubeconfig ? ` and KUBECONFIG=${kubeconfig}` : ""}; exit to leave`,
  );
  const env = {
    ...process.env,
    PATH: `${dirname(kubectl)}:${process.env.PATH ?? ""}`,
    ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
  };
  return spawnSync(shell, [], { stdio: "inherit", env }).status ?? 1;
}
