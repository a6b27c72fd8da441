import { existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { readState } from "@switchyard/testbed/controlplane";
import { cacheBinDir, missingBinariesMessage, resolveBinary } from "@switchyard/testbed/upstream";
import { currentLabDir, readLabState } from "../netns/state.js";
import { repoRoot } from "../self.js";
import type { FlagSpec } from "./command.js";
import { controlPlaneDir } from "./flags.js";

/** `--state-dir` of `env` and `shell`: the lab whose kubeconfig they set (`kubectl` reads SWITCHYARD_LAB_DIR). */
export const kubeconfigLabFlag: FlagSpec = {
  name: "state-dir",
  value: "DIR",
  default: "SWITCHYARD_LAB_DIR, else the lab's default folder",
  help: "the lab whose kubeconfig to use",
  complete: "dir",
};

/** What `kubectl`, `env` and `shell` give a shell: kubectl, the lab's own command, and the kubeconfig to use. */
export interface LabEnv {
  kubectl: string;
  kubeconfig: string | undefined;
  /** A folder holding `switchyard-lab` (a link to lab/bin/switchyard-lab.js), to put on PATH. */
  binDir: string;
  /**
   * The folder of the Node running the lab: the project's (lab/bin runs itself again under it on another major),
   * put first so that `npx` and `node` in the shell are the project's too, not an older system Node.
   */
  nodeDir: string;
}

/**
 * `<cache>/switchyard/bin/switchyard-lab`, linked to this checkout's lab/bin/switchyard-lab.js (the link is
 * renewed when the checkout moved). The bin runs itself under the project's Node, so any `node` on PATH starts it.
 */
export function labBinDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = join(cacheBinDir(env), "..", "..", "bin");
  const link = join(dir, "switchyard-lab");
  const target = join(repoRoot, "lab", "bin", "switchyard-lab.js");
  mkdirSync(dir, { recursive: true });
  const current = isLink(link) ? readlinkSync(link) : existsSync(link) ? "" : undefined;
  if (current === target) return dir;
  if (current !== undefined) unlinkSync(link);
  try {
    symlinkSync(target, link);
  } catch (err) {
    // Another switchyard-lab made the same link meanwhile.
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return dir;
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * kubectl (a one-paragraph error naming the ways to get it when missing) and the kubeconfig: a lab cluster's
 * when one is up (--state-dir, else SWITCHYARD_LAB_DIR, else the default folder), else a bare control plane's.
 */
export function labEnv(stateDir?: string, env: NodeJS.ProcessEnv = process.env): LabEnv {
  const kubectl = resolveBinary("kubectl", env).path;
  if (!kubectl) throw new Error(missingBinariesMessage(["kubectl"], cacheBinDir(env)));
  const { kubeconfig } = labKubeconfig(stateDir, env);
  return { kubectl, kubeconfig, binDir: labBinDir(env), nodeDir: dirname(process.execPath) };
}

/**
 * The kubeconfig `kubectl`, `env` and `shell` use: a lab cluster's when one is up, else a bare control plane's;
 * undefined when neither is, with the two folders looked in (for the error that says so).
 */
export function labKubeconfig(
  stateDir?: string,
  env: NodeJS.ProcessEnv = process.env,
): { kubeconfig: string | undefined; labDir: string; controlPlaneDir: string } {
  const labDir = stateDir ?? currentLabDir(env);
  const controlPlane = controlPlaneDir(undefined, env);
  const kubeconfig = readLabState(labDir)?.kubeconfig || readState(controlPlane)?.kubeconfig || undefined;
  return { kubeconfig, labDir, controlPlaneDir: controlPlane };
}

/** PATH with the project's Node, kubectl's folder and the lab's bin folder first, each once. */
export function labPath(e: LabEnv, path: string | undefined): string {
  const first = [...new Set([e.nodeDir, dirname(e.kubectl), e.binDir])];
  return [...first, ...(path ? [path] : [])].join(":");
}
