import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ProgressSink } from "../progress.js";
import { Progress } from "../progress.js";

/** Where kind publishes its release binaries; SWITCHYARD_KIND_RELEASES points elsewhere (a mirror). */
export const kindReleasesUrl = "https://github.com/kubernetes-sigs/kind/releases/download";

/**
 * The release file for this machine, named as kind names them (kind-darwin-arm64, kind-linux-amd64, ...);
 * undefined elsewhere. Windows is left out: the lab runs there inside WSL 2, which is Linux.
 */
export function kindReleaseFile(platform: NodeJS.Platform, arch: string): string | undefined {
  const os = { darwin: "darwin", linux: "linux" }[platform as string];
  const cpu = { x64: "amd64", arm64: "arm64" }[arch];
  return os && cpu ? `kind-${os}-${cpu}` : undefined;
}

export interface KindDownload {
  version: string;
  /** The folder the binary goes into (the upstream binaries' cache). */
  binDir: string;
  env?: Record<string, string | undefined>;
  platform?: NodeJS.Platform;
  arch?: string;
  fetch?: typeof fetch;
  out?: ProgressSink;
}

/**
 * Downloads kind's release binary for this machine into binDir, checked against the `.sha256sum` file kind
 * publishes beside it, so a laptop without Go gets kind. Written under a temporary name and renamed, so a failed
 * download leaves nothing. Returns its path; any failure is one line naming the URL.
 */
export async function downloadKind(o: KindDownload): Promise<string> {
  const file = kindReleaseFile(o.platform ?? process.platform, o.arch ?? process.arch);
  if (!file)
    throw new Error(
      `kind publishes no binary for ${o.platform ?? process.platform}/${o.arch ?? process.arch} (on Windows, run the lab in WSL 2)`,
    );
  const base = (o.env?.SWITCHYARD_KIND_RELEASES ?? kindReleasesUrl).replace(/\/$/, "");
  const url = `${base}/${o.version}/${file}`;
  const get = o.fetch ?? fetch;
  const progress = new Progress("kind", o.out ?? process.stderr);
  progress.update(`downloading ${url}`, true);
  const fetchBytes = async (from: string): Promise<Buffer> => {
    const res = await get(from, { redirect: "follow" }).catch((err: Error) => {
      throw new Error(`downloading ${from}: ${err.cause instanceof Error ? err.cause.message : err.message}`);
    });
    if (!res.ok) throw new Error(`downloading ${from}: HTTP ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  };
  const sums = (await fetchBytes(`${url}.sha256sum`)).toString("utf8");
  const want = /^([0-9a-f]{64})\b/m.exec(sums)?.[1];
  if (!want) throw new Error(`${url}.sha256sum holds no SHA-256 sum`);
  const binary = await fetchBytes(url);
  const got = createHash("sha256").update(binary).digest("hex");
  if (got !== want)
    throw new Error(`${url}: SHA-256 ${got} is not the published ${want}; nothing was installed`);
  mkdirSync(o.binDir, { recursive: true });
  const target = join(o.binDir, "kind");
  const partial = `${target}.download-${process.pid}`;
  writeFileSync(partial, binary);
  chmodSync(partial, 0o755);
  renameSync(partial, target);
  progress.done(
    `kind ${o.version} in ${target} (${(binary.length / 2 ** 20).toFixed(1)} MiB, SHA-256 checked)`,
  );
  return target;
}
