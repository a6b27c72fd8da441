import { defaultStateDir } from "@switchyard/testbed/controlplane";
import { currentLabDir } from "../netns/state.js";
import type { FlagSpec } from "./command.js";

/** `--state-dir` of every command that acts on a lab cluster (`up`, `status`, `scenario`, ...). */
export const labStateDirFlag: FlagSpec = {
  name: "state-dir",
  value: "DIR",
  default: `SWITCHYARD_LAB_DIR, else ${currentLabDir({ ...process.env, SWITCHYARD_LAB_DIR: "" })}`,
  help: "the lab's state folder: lab.json, certificates, logs (one lab per folder)",
  complete: "dir",
};

/** The lab folder a command acts on: --state-dir, else SWITCHYARD_LAB_DIR, else the default. */
export const labDir = (given: string | undefined): string => given ?? currentLabDir();

/**
 * The bare control plane's folder: --state-dir, else SWITCHYARD_STATE_DIR, else the default; the `controlplane`
 * commands act on it and `kubectl`, `env` and `shell` read its kubeconfig when no lab is up.
 */
export const controlPlaneDir = (given: string | undefined, env: NodeJS.ProcessEnv = process.env): string =>
  given ?? (env.SWITCHYARD_STATE_DIR || defaultStateDir(env));
