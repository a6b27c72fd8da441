import type { Exec } from "../exec.js";

/**
 * The reaper image testcontainers starts (its reaper.ts; RYUK_CONTAINER_IMAGE overrides it, as there). Kept in step
 * with the testcontainers version in package.json; the test of this file reads the version it ships.
 */
export const ryukImage = () => process.env.RYUK_CONTAINER_IMAGE ?? "testcontainers/ryuk:0.14.0";

/**
 * Whether Ryuk can watch a test's nodes: on unless TESTCONTAINERS_RYUK_DISABLED says otherwise, and only when its
 * image is on the engine or can be pulled. Where no registry answers (this CI machine) it is turned off for the
 * process, with one line saying so: the nodes are then removed by `down` (or the failed `up`) alone, which finds
 * them by kind's label either way.
 */
export async function ryukAvailable(
  exec: Exec,
  docker: string,
  say: (line: string) => void,
): Promise<boolean> {
  if (process.env.TESTCONTAINERS_RYUK_DISABLED === "true") return false;
  const image = ryukImage();
  const present = await exec([docker, "image", "inspect", "--format", "{{.Id}}", image]).then(
    () => true,
    () => false,
  );
  if (present) return true;
  const pulled = await exec([docker, "pull", image]).then(
    () => true,
    () => false,
  );
  if (pulled) return true;
  process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
  say(`Ryuk off: ${image} is not on this engine and cannot be pulled; down removes the nodes`);
  return false;
}
