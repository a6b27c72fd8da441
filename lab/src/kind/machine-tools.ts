import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { ProgressSink } from "../progress.js";
import { cacheBinDir, type Env, envVarFor, resolveBinary } from "../upstream/binaries.js";
import { buildUpstream, goAvailable } from "../upstream/build.js";
import { readVersions } from "../upstream/versions.js";
import { downloadKind } from "./kind-release.js";
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
 * The kind runtime's tools on this machine: kind as the other upstream binaries are found (when it is missing:
 * built from lab/upstream/kind where Go is, a minute, once; else kind's release binary downloaded into the same
 * cache), docker from PATH, kubectl from the upstream binaries. Then the Docker engine must answer, before
 * anything is built.
 */
export async function kindToolsOnThisMachine(out: ProgressSink, env: Env = process.env): Promise<KindTools> {
  const cacheDir = cacheBinDir(env);
  let kind = resolveBinary("kind", env, cacheDir).path;
  if (!kind && (await goAvailable(env))) {
    await buildUpstream({ only: ["kind"], env, out });
    kind = resolveBinary("kind", env, cacheDir).path;
  } else if (!kind) {
    const version = readVersions().kind;
    if (!version)
      throw new Error('kind is missing, and lab/upstream/versions.json pins no "kind" to download');
    kind = await downloadKind({ version, binDir: cacheDir, env, out }).catch((err: Error) => {
      throw new Error(
        `kind is missing and Go is not there to build it; ${err.message}. Install kind ${version} on PATH (brew install kind, or its release from kind.sigs.k8s.io), or set ${envVarFor("kind")}=<path>`,
      );
    });
  }
  const tools = findKindTools(
    (name) =>
      name === "kind"
        ? kind
        : name === "docker"
          ? onPath("docker", env)
          : resolveBinary(name, env, cacheDir).path,
    cacheDir,
  );
  const engine = await dockerProbe();
  if (!engine.ok)
    throw new Error(`the kind runtime needs a running Docker engine; docker info says: ${engine.why}`);
  return tools;
}
