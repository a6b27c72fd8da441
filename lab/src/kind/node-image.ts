import { join } from "node:path";
import type { Exec } from "../exec.js";

export interface NodeImageChoice {
  /** The image every node container runs. */
  image: string;
  /**
   * How it was found: on the engine already, pulled, or built here from Debian packages and
   * packages/testbed/upstream.
   */
  how: "present" | "pulled" | "built";
}

export interface NodeImageDeps {
  exec: Exec;
  docker: string;
  /** Runs scripts/kind-node-image.mjs; the image reference is its stdout's last line. */
  buildLocal: () => Promise<string>;
  say: (line: string) => void;
}

/**
 * The node image for `up`: the requested one when the engine has it or can pull it. Where it cannot be pulled
 * and it is the default (`kindest/node:<pinned version>`), a compatible image is built here instead (once: the
 * build is cached by tag). A node image the user named is never replaced: its pull error is the answer.
 */
export async function chooseNodeImage(
  requested: string,
  isDefault: boolean,
  d: NodeImageDeps,
): Promise<NodeImageChoice> {
  const present = await d
    .exec([d.docker, "image", "inspect", "--format", "{{.Id}}", requested])
    .then(() => true)
    .catch(() => false);
  if (present) return { image: requested, how: "present" };
  d.say(`pulling ${requested}`);
  const pullError = await d
    .exec([d.docker, "pull", requested])
    .then(() => undefined)
    .catch((err: Error) => err.message.split("\n").filter(Boolean).pop() ?? err.message);
  if (!pullError) return { image: requested, how: "pulled" };
  if (!isDefault)
    throw new Error(`--node-image ${requested}: not on this engine, and docker pull failed: ${pullError}`);
  d.say(`${requested} cannot be pulled (${pullError}); building a node image here`);
  return { image: await d.buildLocal(), how: "built" };
}

/**
 * The real local build: the project's Node runs the script, whose progress goes to `say`. It needs Linux and root
 * (debootstrap, chroot); elsewhere (a Mac, a user without root) the answer is one line saying so.
 */
export function localNodeImageBuild(
  repoRoot: string,
  exec: Exec,
  host: { platform: NodeJS.Platform; uid: number | undefined } = {
    platform: process.platform,
    uid: process.getuid?.(),
  },
): () => Promise<string> {
  return async () => {
    if (host.platform !== "linux" || host.uid !== 0)
      throw new Error(
        "a node image is built here only on Linux as root (debootstrap and chroot); pass --node-image with a kindest/node release that can be pulled",
      );
    const out = await exec([process.execPath, join(repoRoot, "scripts", "kind-node-image.mjs")]);
    const image = out.trim().split("\n").pop()?.trim() ?? "";
    if (!image) throw new Error("scripts/kind-node-image.mjs printed no image reference");
    return image;
  };
}
