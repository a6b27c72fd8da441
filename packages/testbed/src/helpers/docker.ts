// The Docker engine and image builds for the image tests (apps/*/test/image.test.ts): one copy, so every image
// test gets its engine, skips and builds the same way.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// packages/testbed/src/helpers and packages/testbed/dist/helpers are both four levels below the repository root.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

export interface DockerEngine {
  /** Why image tests cannot run here (not root and no `docker info` answers), or undefined. */
  skip?: string;
  /** The environment every `docker` call of the test runs with (DOCKER_HOST of the engine found). */
  env: NodeJS.ProcessEnv;
}

/**
 * The engine: scripts/docker-engine.mjs uses the one that answers, else starts the private one (root only).
 * Call it once at a test file's top level and pass `skip` to `describe`.
 */
export function dockerEngine(): DockerEngine {
  const r = spawnSync(process.execPath, [join(root, "scripts", "docker-engine.mjs"), "start"], {
    encoding: "utf8",
  });
  if (r.status !== 0)
    return { skip: `no Docker engine: ${r.stderr.trim().split("\n").pop()}`, env: process.env };
  const host = /^DOCKER_HOST=(\S+)$/m.exec(r.stdout)?.[1] ?? process.env.DOCKER_HOST;
  return { env: { ...process.env, ...(host ? { DOCKER_HOST: host } : {}) } };
}

/** Runs `docker args` on `engine`; its trimmed stdout, or an error with docker's stderr. */
export function docker(engine: DockerEngine, args: readonly string[]): string {
  const r = spawnSync("docker", args, { env: engine.env, encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
  if (r.status !== 0)
    throw new Error(`docker ${args.join(" ")}: ${(r.stderr || r.error?.message || "").trim()}`);
  return r.stdout.trim();
}

/** `docker rm -f` of each container that exists; never throws (for `after`, which must run to its end). */
export function removeContainers(engine: DockerEngine, names: readonly string[]): void {
  if (engine.skip || names.length === 0) return;
  spawnSync("docker", ["rm", "-f", ...names], { env: engine.env, stdio: "ignore" });
}

/** A container's stdout and stderr, for assertion messages; a note instead when docker cannot give them. */
export function containerLog(engine: DockerEngine, name: string): string {
  const r = spawnSync("docker", ["logs", "--tail", "200", name], { env: engine.env, encoding: "utf8" });
  return r.status === 0 ? `${r.stdout}${r.stderr}` : `(no log of ${name}: ${r.stderr.trim()})`;
}

/**
 * Builds `switchyard/<app>:dev` (and the version tag) with scripts/images.mjs, as `npm run images -- <app>`
 * does; when nothing changed the engine's layer cache makes this a matter of seconds. Throws when it fails.
 */
export function buildImage(
  engine: DockerEngine,
  app: "kube-proxy" | "cluster-dns" | "slice-controller",
): string {
  const build = spawnSync(process.execPath, [join(root, "scripts", "images.mjs"), app], {
    env: engine.env,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (build.status !== 0)
    throw new Error(`scripts/images.mjs ${app} failed (log: /tmp/switchyard-image-${app}.log)`);
  return `switchyard/${app}:dev`;
}

/**
 * The host's address on Docker's default bridge: where a container on the bridge reaches a server of the test
 * (an upstream, the apiserver). Docker 20.10 may list only the subnet; the gateway is then its first address.
 */
export function bridgeGateway(engine: DockerEngine): string {
  const config = JSON.parse(
    docker(engine, ["network", "inspect", "bridge", "--format", "{{json .IPAM.Config}}"]),
  ) as { Subnet?: string; Gateway?: string }[];
  const v4 = config.find((c) => c.Subnet?.includes("."));
  if (v4?.Gateway) return v4.Gateway;
  const octets = (v4?.Subnet ?? "").split("/")[0]?.split(".").map(Number) ?? [];
  if (octets.length !== 4) throw new Error(`no IPv4 subnet on Docker's bridge: ${JSON.stringify(config)}`);
  octets[3] = (octets[3] ?? 0) + 1;
  return octets.join(".");
}
