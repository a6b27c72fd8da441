import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Container } from "kubernetes-types/core/v1.js";

/** What the lab runs for a container image: nothing (pause), a command, or nothing it knows. */
export type Runnable =
  | { kind: "none" }
  | { kind: "process"; argv: string[] }
  | { kind: "unknown"; message: string };

export interface ImageContext {
  repoRoot: string;
  /** How to run the lab's echo server (labEntry("agent/echo")). */
  echo: string[];
  node: string;
}

/** The image's repository without registry tag or digest: "switchyard/echo:1.0" → "switchyard/echo". */
export function imageName(image: string): string {
  const noDigest = image.split("@")[0] ?? image;
  const slash = noDigest.lastIndexOf("/");
  const colon = noDigest.lastIndexOf(":");
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

/**
 * Images are resolved, never pulled: the pause image, the lab's echo server, and `switchyard/<app>` for every
 * app of this repository with a bin (run with the container's args, like the app's Dockerfile entrypoint).
 */
export function resolveImage(container: Container, ctx: ImageContext): Runnable {
  const image = container.image ?? "";
  const name = imageName(image);
  const unknown = (why = ""): Runnable => ({
    kind: "unknown",
    message: `image ${image} is not known to the switchyard lab runtime${why}`,
  });
  if (name === "registry.k8s.io/pause" || name === "k8s.gcr.io/pause") return { kind: "none" };
  if (name === "switchyard/echo") return { kind: "process", argv: [...ctx.echo, ...(container.args ?? [])] };
  const app = /^switchyard\/([a-z0-9-]+)$/.exec(name)?.[1];
  if (!app) return unknown();
  const pkgFile = join(ctx.repoRoot, "apps", app, "package.json");
  if (!existsSync(pkgFile)) return unknown(` (no apps/${app} in this repository)`);
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as { bin?: string | Record<string, string> };
  const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin ?? {})[0];
  if (!bin) return unknown(` (apps/${app} has no bin)`);
  return {
    kind: "process",
    argv: [ctx.node, join(ctx.repoRoot, "apps", app, bin), ...(container.args ?? [])],
  };
}
