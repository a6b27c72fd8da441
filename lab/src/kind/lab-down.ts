import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ProgressSink } from "@switchyard/testbed/progress";
import type { Exec } from "../exec.js";
import { kindToolsOnThisMachine } from "./machine-tools.js";
import { kindClusterLabel, kindNetwork } from "./node-container.js";
import { kindPaths } from "./paths.js";
import type { StepDeps } from "./run-steps.js";
import { spawnExec } from "./spawn-exec.js";
import { readKindState } from "./state.js";
import type { KindTools } from "./tools.js";

export interface KindDownOptions {
  /** Keep the state folder (logs, config, manifests); lab.json goes either way. */
  keepFiles?: boolean;
  tools?: Pick<KindTools, "docker">;
  deps?: Pick<StepDeps, "exec">;
  out?: ProgressSink;
}

/**
 * Removes the lab recorded in `dir`: every container labelled with its cluster (what kind's `delete cluster`
 * removes, whether or not Ryuk was watching them) with its /var volume, then kind's Docker network when nothing
 * else is on it, then the state folder. A cluster already gone is done.
 */
export async function kindDown(dir: string, o: KindDownOptions = {}): Promise<string[]> {
  const state = readKindState(dir);
  if (!state) return [];
  const paths = kindPaths(dir);
  const tools = o.tools ?? (await kindToolsOnThisMachine(o.out ?? process.stderr));
  const exec = o.deps?.exec ?? spawnExec(paths.commandLog);
  const removed = await removeKindNodes(exec, tools.docker, state.input.name).catch((err: Error) => {
    throw new Error(
      `removing cluster ${state.input.name} failed (state kept in ${dir}): ${err.message.split("\n")[0]}`,
    );
  });
  const network = await removeIdleKindNetwork(exec, tools.docker);
  if (!o.keepFiles && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  else rmSync(paths.stateFile, { force: true });
  return [
    `kind cluster ${state.input.name} (${removed.length > 0 ? removed.join(", ") : "no node container was left"})`,
    ...(network ? [`Docker network ${kindNetwork} (no container left on it)`] : []),
  ];
}

/** The cluster's node containers by kind's label, running or not. */
export async function kindNodeContainers(exec: Exec, docker: string, cluster: string): Promise<string[]> {
  const out = await exec([
    ...[docker, "ps", "-a", "--filter", `label=${kindClusterLabel}=${cluster}`],
    ...["--format", "{{.Names}}"],
  ]);
  return out
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .sort();
}

/** Removes the cluster's node containers and their anonymous volumes; their names. */
export async function removeKindNodes(exec: Exec, docker: string, cluster: string): Promise<string[]> {
  const names = await kindNodeContainers(exec, docker, cluster);
  if (names.length > 0) await exec([docker, "rm", "-f", "-v", ...names]);
  return names;
}

/** After a failed `up`: each node's container log and systemd journal into `dir` (kept), as `kind export logs`. */
export async function exportNodeLogs(
  exec: Exec,
  docker: string,
  cluster: string,
  dir: string,
): Promise<void> {
  for (const node of await kindNodeContainers(exec, docker, cluster).catch(() => [])) {
    mkdirSync(join(dir, node), { recursive: true });
    const save = async (file: string, argv: string[]) =>
      writeFileSync(join(dir, node, file), await exec(argv).catch((err: Error) => err.message));
    await save("journal.log", [docker, "exec", node, "journalctl", "--no-pager"]);
    await save("kubelet.log", [docker, "exec", node, "journalctl", "--no-pager", "-u", "kubelet"]);
    await save("inspect.json", [docker, "inspect", node]);
  }
}

/**
 * kind's network goes when no container, running or stopped, is attached to it: another kind cluster (or anything
 * else on it) keeps it. The next `up` makes it again. True when it was removed.
 */
async function removeIdleKindNetwork(exec: Exec, docker: string): Promise<boolean> {
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
