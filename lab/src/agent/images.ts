import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Container } from "kubernetes-types/core/v1.js";
import { expandVars } from "./expand-vars.js";
import { type CatalogContext, catalogImage, type ImageLayer } from "./image-catalog.js";

/** What the lab runs for a container image: nothing (pause), a command with the image's files, or nothing it knows. */
export type Runnable =
  | { kind: "none" }
  | { kind: "process"; argv: string[]; layer?: ImageLayer }
  | { kind: "unknown"; message: string };

export interface ImageContext extends CatalogContext {
  repoRoot: string;
  /** How to run the lab's echo server (labEntry("agent/echo")). */
  echo: string[];
  /** How to run the lab's traffic generator (labEntry("agent/loadgen")). */
  loadgen?: string[];
  /** How to run the lab's numbered-line printer (labEntry("agent/counter")), for log tests. */
  counter?: string[];
  node: string;
}

/**
 * The lab's own images (echo.ts, loadgen.ts; lab/Dockerfile builds them), tagged so that a kind node finds the
 * loaded image without a pull (an untagged reference means :latest and a pull every time); the netns lab's agent
 * runs its own programs for the name, any tag.
 */
export const echoImage = "switchyard/echo:0.1.0";
export const loadgenImage = "switchyard/loadgen:0.1.0";

/** The lab's own programs by image name (the netns runtime only; lab/Dockerfile builds echo and loadgen). */
function ownImages(ctx: ImageContext): Record<string, string[] | undefined> {
  return {
    "switchyard/echo": ctx.echo,
    "switchyard/loadgen": ctx.loadgen,
    "switchyard/counter": ctx.counter,
  };
}

/** The image's repository without registry tag or digest: "switchyard/echo:1.0" → "switchyard/echo". */
export function imageName(image: string): string {
  const noDigest = image.split("@")[0] ?? image;
  const slash = noDigest.lastIndexOf("/");
  const colon = noDigest.lastIndexOf(":");
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

/**
 * Images are resolved, never pulled: the pause image, the lab's echo server and traffic generator, and
 * `switchyard/<app>` for every app of this repository with a bin, each run as the host's program; the images of
 * the catalog (image-catalog.ts: upstream's kube-proxy, CoreDNS, agnhost, busybox, nginx...) as their files laid
 * over the host's root, with their entrypoint and cmd. A `command` replaces the entrypoint and the cmd, `args`
 * replace the cmd, as a container runtime does; `$(VAR)` references in both are expanded from the container's
 * environment, as the kubelet does.
 */
export function resolveImage(
  container: Container,
  ctx: ImageContext,
  env: Record<string, string> = {},
): Runnable {
  const image = container.image ?? "";
  const name = imageName(image);
  const args = (container.args ?? []).map((a) => expandVars(a, env));
  const command = container.command?.map((a) => expandVars(a, env));
  if (name === "registry.k8s.io/pause" || name === "k8s.gcr.io/pause") return { kind: "none" };
  const own = ownImages(ctx)[name];
  if (own) {
    if (command) return notKnown(image, ` (the lab's own images take args, not a command)`);
    return { kind: "process", argv: [...own, ...args] };
  }
  const known = catalogImage(name, image, ctx);
  if (known && "missing" in known) return { kind: "unknown", message: known.missing };
  if (known) {
    const argv = command
      ? [...command, ...args]
      : [...(known.entrypoint ?? []), ...(args.length > 0 ? args : (known.cmd ?? []))];
    if (argv.length === 0)
      return { kind: "unknown", message: `image ${image} has no entrypoint: give a command` };
    return { kind: "process", argv, layer: known.layer };
  }
  return appProcess(image, name, ctx, command, args) ?? notKnown(image);
}

const notKnown = (image: string, why = ""): Runnable => ({
  kind: "unknown",
  message: `image ${image} is not known to the switchyard lab runtime${why}`,
});

/** `switchyard/<app>`: the app's bin with this machine's Node; undefined for any other name. */
function appProcess(
  image: string,
  name: string,
  ctx: ImageContext,
  command: string[] | undefined,
  args: string[],
): Runnable | undefined {
  const app = /^switchyard\/([a-z0-9-]+)$/.exec(name)?.[1];
  if (!app) return undefined;
  const unknown = (why: string) => notKnown(image, why);
  const pkgFile = join(ctx.repoRoot, "apps", app, "package.json");
  if (!existsSync(pkgFile)) return unknown(` (no apps/${app} in this repository)`);
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as { bin?: string | Record<string, string> };
  const bins = typeof pkg.bin === "string" ? { [app]: pkg.bin } : (pkg.bin ?? {});
  const bin = Object.values(bins)[0];
  if (!bin) return unknown(` (apps/${app} has no bin)`);
  const entry = [ctx.node, join(ctx.repoRoot, "apps", app, bin)];
  if (!command) return { kind: "process", argv: [...entry, ...args] };
  const [first = "", ...rest] = command;
  if (!appCommand(app, Object.keys(bins), first))
    return {
      kind: "unknown",
      message: `command ${first} is not in image ${image} (it has ${app} and ${Object.keys(bins).join(", ")})`,
    };
  return { kind: "process", argv: [...entry, ...rest, ...args] };
}

/**
 * Whether a command names the app's entrypoint: its bin names or the upstream program it replaces (the app's
 * folder name), under any path, since the images link both into /usr/local/bin (apps/kube-proxy/Dockerfile).
 */
function appCommand(app: string, binNames: string[], command: string): boolean {
  const base = basename(command);
  return base === app || binNames.includes(base);
}
