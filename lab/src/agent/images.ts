import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Container } from "kubernetes-types/core/v1.js";
import type { UpstreamBinary } from "../upstream/binaries.js";
import type { Busybox } from "./busybox.js";
import { expandVars } from "./expand-vars.js";

/** What the lab runs for a container image: nothing (pause), a command, or nothing it knows. */
export type Runnable =
  | { kind: "none" }
  | { kind: "process"; argv: string[] }
  | { kind: "unknown"; message: string };

export interface ImageContext {
  repoRoot: string;
  /** How to run the lab's echo server (labEntry("agent/echo")). */
  echo: string[];
  /** How to run the lab's traffic generator (labEntry("agent/loadgen")). */
  loadgen?: string[];
  /** How to run the lab's numbered-line printer (labEntry("agent/counter")), for log tests. */
  counter?: string[];
  node: string;
  /** The pinned release's binary of that name (resolveBinary), for the upstream images below; undefined: missing. */
  upstream?: (name: UpstreamBinary) => string | undefined;
  /** The host's busybox (hostBusybox), for the busybox image; undefined: not installed. */
  busybox?: () => Busybox | undefined;
}

/**
 * Upstream's images that the lab runs from lab/upstream's binaries, whatever the tag (there is one pinned release):
 * the files of the image that are the binary, and the image's entrypoint. kubeadm's kube-proxy DaemonSet gives a
 * command (/usr/local/bin/kube-proxy, the image has no entrypoint); its CoreDNS Deployment gives only args.
 */
const upstreamImages: Record<string, { binary: UpstreamBinary; files: string[]; entrypoint?: string }> = {
  "registry.k8s.io/kube-proxy": { binary: "kube-proxy", files: ["/usr/local/bin/kube-proxy"] },
  "registry.k8s.io/coredns/coredns": { binary: "coredns", files: ["/coredns"], entrypoint: "/coredns" },
  // The e2e suite's test program: `netexec --http-port=8080`, `pause`, `serve-hostname` and the rest as args.
  "registry.k8s.io/e2e-test-images/agnhost": {
    binary: "agnhost",
    files: ["/agnhost"],
    entrypoint: "/agnhost",
  },
};

/** The busybox image under the names pods give it: Docker Hub's (short or long) and the e2e suite's copy. */
const busyboxImages = new Set([
  "busybox",
  "library/busybox",
  "docker.io/busybox",
  "docker.io/library/busybox",
  "registry.k8s.io/e2e-test-images/busybox",
]);

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
 * `switchyard/<app>` for every app of this repository with a bin, upstream's images from lab/upstream's binaries
 * (kube-proxy, CoreDNS, agnhost), and busybox from the host's. `args` follow the entrypoint, as in the app's
 * Dockerfile; a `command` replaces the entrypoint and must name something the image has (see appCommand).
 * `$(VAR)` references in both are expanded from the container's environment, as the kubelet does.
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
  const unknown = (why = ""): Runnable => ({
    kind: "unknown",
    message: `image ${image} is not known to the switchyard lab runtime${why}`,
  });
  if (name === "registry.k8s.io/pause" || name === "k8s.gcr.io/pause") return { kind: "none" };
  const own = ownImages(ctx)[name];
  if (own) {
    if (command) return unknown(` (the lab's own images take args, not a command)`);
    return { kind: "process", argv: [...own, ...args] };
  }
  const upstream = upstreamImages[name];
  if (upstream) return upstreamProcess(image, upstream, ctx, command, args);
  if (busyboxImages.has(name)) return busyboxProcess(image, ctx, command, args);
  const app = /^switchyard\/([a-z0-9-]+)$/.exec(name)?.[1];
  if (!app) return unknown();
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

function upstreamProcess(
  image: string,
  spec: (typeof upstreamImages)[string],
  ctx: ImageContext,
  command: string[] | undefined,
  args: string[],
): Runnable {
  const binary = ctx.upstream?.(spec.binary);
  if (!binary)
    return {
      kind: "unknown",
      message: `image ${image} runs the ${spec.binary} binary of lab/upstream, which is missing (npx switchyard-lab upstream build)`,
    };
  const [first, ...rest] = command ?? (spec.entrypoint ? [spec.entrypoint] : []);
  if (first === undefined)
    return {
      kind: "unknown",
      message: `image ${image} has no entrypoint: give a command (${spec.files[0]})`,
    };
  if (!spec.files.includes(first))
    return {
      kind: "unknown",
      message: `command ${first} is not in image ${image} (it has ${spec.files.join(", ")})`,
    };
  return { kind: "process", argv: [binary, ...rest, ...args] };
}

/**
 * The busybox image has no entrypoint and `sh` as its command, so args alone are the whole command line; every
 * command in it is an applet of /bin/busybox, under any path (/bin/sh, /bin/nslookup), or busybox itself.
 */
function busyboxProcess(
  image: string,
  ctx: ImageContext,
  command: string[] | undefined,
  args: string[],
): Runnable {
  const busybox = ctx.busybox?.();
  if (!busybox)
    return {
      kind: "unknown",
      message: `image ${image} runs the host's /bin/busybox, which is missing (apt-get install busybox-static)`,
    };
  const words = command ? [...command, ...args] : args.length > 0 ? args : ["sh"];
  const [first = "", ...rest] = words;
  const applet = basename(first);
  if (applet === "busybox") return { kind: "process", argv: [busybox.path, ...rest] };
  if (!busybox.applets.has(applet))
    return { kind: "unknown", message: `command ${first} is not in image ${image} (not a busybox applet)` };
  return { kind: "process", argv: [busybox.path, applet, ...rest] };
}

/**
 * Whether a command names the app's entrypoint: its bin names or the upstream program it replaces (the app's
 * folder name), under any path, since the images link both into /usr/local/bin (apps/kube-proxy/Dockerfile).
 */
function appCommand(app: string, binNames: string[], command: string): boolean {
  const base = basename(command);
  return base === app || binNames.includes(base);
}
