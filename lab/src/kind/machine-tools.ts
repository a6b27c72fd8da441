import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { ProgressSink } from "@switchyard/testbed/progress";
import { cacheBinDir, type Env, resolveBinary } from "@switchyard/testbed/upstream";
import { dockerProbe } from "./probes.js";
import { findKindTools, type KindTools } from "./tools.js";

function onPath(name: string, env: Env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {}
  }
  return undefined;
}

/**
 * The kind runtime's tools on this machine: docker from PATH, kubectl as the other upstream binaries are found
 * (the cache, PATH, SWITCHYARD_KUBECTL). No kind CLI and no Go: the nodes are made through testcontainers
 * (provision.ts). Then the Docker engine must answer, before anything is built.
 */
export async function kindToolsOnThisMachine(_out: ProgressSink, env: Env = process.env): Promise<KindTools> {
  const cacheDir = cacheBinDir(env);
  const tools = findKindTools(
    (name) => (name === "docker" ? onPath("docker", env) : resolveBinary(name, env, cacheDir).path),
    cacheDir,
  );
  const engine = await dockerProbe();
  if (!engine.ok)
    throw new Error(`the kind runtime needs a running Docker engine; docker info says: ${engine.why}`);
  return tools;
}
