/**
 * Builds packages/testbed/upstream/kubernetes/cmd/stream-probe, a client-go exec/port-forward client, so the
 * streaming tests talk to the kubelet-api module through upstream's SPDY code. The binary is cached by the
 * hash of its source (the module's go.sum pins everything else); undefined when no Go toolchain is on PATH.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { upstreamDir } from "@switchyard/testbed/upstream";

const run = promisify(execFile);
const moduleDir = join(upstreamDir, "kubernetes");
const sourceFile = join(moduleDir, "cmd", "stream-probe", "main.go");

export async function buildStreamProbe(): Promise<string | undefined> {
  const hash = createHash("sha256")
    .update(readFileSync(sourceFile))
    .update(readFileSync(join(moduleDir, "go.sum")))
    .digest("hex")
    .slice(0, 16);
  const cacheDir = join(
    process.env.SWITCHYARD_CACHE_DIR ?? join(homedir(), ".cache", "switchyard"),
    "stream-probe",
  );
  const binary = join(cacheDir, `stream-probe-${hash}`);
  if (existsSync(binary)) return binary;
  try {
    await run("go", ["version"]);
  } catch {
    return undefined;
  }
  mkdirSync(cacheDir, { recursive: true });
  const staging = `${binary}.${process.pid}`;
  // The same environment packages/testbed/src/upstream/build.ts builds with: no toolchain downloads, static,
  // no VCS stamping.
  const env = { ...process.env, GOTOOLCHAIN: "local", CGO_ENABLED: "0", GOFLAGS: "-buildvcs=false" };
  await run("go", ["build", "-trimpath", "-ldflags", "-s -w", "-o", staging, "./cmd/stream-probe"], {
    cwd: moduleDir,
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  renameSync(staging, binary);
  return binary;
}
