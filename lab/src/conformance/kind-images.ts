import { join } from "node:path";
import type { Progress } from "@switchyard/testbed/progress";
import type { Exec } from "../exec.js";
import { loadImagesNodesLack } from "../kind/images-held.js";
import { kindNodeContainers } from "../kind/lab-down.js";
import { loadImagesIntoNodes } from "../kind/load-images.js";

/**
 * The e2e suite's images this repository can make (packages/testbed/upstream/images/e2e-<name>), as
 * scripts/images.mjs lists them.
 */
const makeable =
  /^registry\.k8s\.io\/(e2e-test-images\/(agnhost|busybox|nginx|glibc-dns-testing|regression-issue-74839)|build-image\/distroless-iptables):/;

/** The references of the suite's own list (`e2e.test --list-images`) that the lab provides. */
export function providedImages(listImages: string): string[] {
  return listImages
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => makeable.test(l));
}

/**
 * Gets the suite's test images into every node of a kind lab, never through a registry from inside the nodes:
 * each one present in the engine or pulled there (a laptop with internet gets upstream's own), else built here
 * from packages/testbed/upstream's binaries (`node scripts/images.mjs --e2e`), then loaded, as the lab's own
 * images are, into the nodes that lack them (kind/images-held.ts). Images the lab cannot make (the suite lists more) stay out; specs that need them fail, on both
 * stacks alike.
 */
export async function e2eImagesOnKind(
  exec: Exec,
  docker: string,
  cluster: string,
  e2eTest: string,
  repoRoot: string,
  log: string,
  progress: Progress,
  load = (images: readonly string[], nodes: readonly string[]) =>
    loadImagesIntoNodes(docker, images, nodes, log),
): Promise<string[]> {
  const refs = providedImages(await exec([e2eTest, "--list-images"]));
  const have = async (ref: string) =>
    exec([docker, "image", "inspect", ref]).then(
      () => true,
      () => false,
    );
  const missing: string[] = [];
  for (const ref of refs) {
    if (await have(ref)) continue;
    progress.update(`pulling ${ref}`, true);
    if (
      !(await exec([docker, "pull", "-q", ref]).then(
        () => true,
        () => false,
      ))
    )
      missing.push(ref);
  }
  if (missing.length > 0) {
    progress.update(`building ${missing.length} e2e image(s) here (none could be pulled)`, true);
    await exec([process.execPath, join(repoRoot, "scripts", "images.mjs"), "--e2e"]);
  }
  // Built or pulled above where the engine lacked them; a node is loaded only with what it lacks.
  progress.update(`${refs.length} e2e images: into the nodes that lack them`, true);
  const nodes = await kindNodeContainers(exec, docker, cluster);
  progress.update(
    await loadImagesNodesLack({ exec, docker, build: async () => {}, load }, refs, nodes),
    true,
  );
  return refs;
}
