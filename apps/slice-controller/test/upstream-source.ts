// Where the Go module cache holds kubernetes at the tag packages/testbed/upstream/versions.json pins: tests
// read upstream's golden files from there instead of copies that could drift from the release the lab builds.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { readVersions } from "@switchyard/testbed/upstream";

export interface UpstreamSource {
  /** The module folder, e.g. ~/go/pkg/mod/k8s.io/kubernetes@v1.37.2; undefined when absent. */
  dir: string | undefined;
  /** Why tests that need the source cannot run here, or undefined when they can. */
  skip: string | undefined;
}

export function kubernetesSource(env: Record<string, string | undefined> = process.env): UpstreamSource {
  const version = readVersions().kubernetes;
  const modCache = env.GOMODCACHE || join(env.GOPATH || join(homedir(), "go"), "pkg", "mod");
  const dir = join(modCache, "k8s.io", `kubernetes@${version}`);
  if (existsSync(dir)) return { dir, skip: undefined };
  return {
    dir: undefined,
    skip: `upstream source absent: ${dir} not found (\`npx switchyard-lab upstream build\` downloads it into the Go module cache)`,
  };
}
