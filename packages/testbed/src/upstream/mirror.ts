// A release mirror made from binaries already on this machine: the files laid out under one folder at exactly the
// paths releases.ts asks the official origins for, with their checksum files in each origin's own shape, and a
// small HTTP server for that folder. What the download path is tested and benchmarked against without the
// internet, and what a workshop room can serve from one laptop.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, createReadStream, linkSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve, sep } from "node:path";
import { writeFileAtomic } from "../write-file.js";
import type { Env, UpstreamBinary } from "./binaries.js";
import {
  goPlatform,
  MIRROR_VARS,
  type Platform,
  type ReleaseAsset,
  type ReleaseOrigin,
  releaseAsset,
} from "./releases.js";
import { readVersions, type UpstreamVersions } from "./versions.js";

/** Each origin's folder under the mirror's root, and so under its URL. */
const ORIGIN_FOLDERS: Record<ReleaseOrigin, string> = { kubernetes: "k8s", etcd: "etcd", coredns: "coredns" };

/** The mirror variables that point every origin at a mirror served at baseUrl. */
export function mirrorEnv(baseUrl: string): Record<string, string> {
  const base = baseUrl.replace(/\/+$/, "");
  const env: Record<string, string> = {};
  for (const [origin, variable] of Object.entries(MIRROR_VARS))
    env[variable] = `${base}/${ORIGIN_FOLDERS[origin as ReleaseOrigin]}`;
  return env;
}

/** The SHA-256 (hex) of a file, read as a stream: release binaries are tens of MB. */
export function sha256File(path: string): Promise<string> {
  return new Promise((done, fail) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", fail)
      .on("end", () => done(hash.digest("hex")));
  });
}

/** A hard link where the filesystem allows one (no copy of hundreds of MB), else a copy. */
function linkOrCopy(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  rmSync(to, { force: true });
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

function tarCreate(archive: string, dir: string, entries: readonly string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn("tar", ["-czf", archive, "-C", dir, ...entries], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.on("error", (err) => fail(new Error(`tar: ${err.message}`)));
    child.on("close", (code) =>
      code === 0 ? done() : fail(new Error(`tar -czf ${archive}: ${stderr.trim()}`)),
    );
  });
}

/** The checksum file's text in its origin's shape: dl.k8s.io's bare hash, else `hash  name` lines (etcd, CoreDNS). */
function checksumText(origin: ReleaseOrigin, entries: readonly { hash: string; name: string }[]): string {
  if (origin === "kubernetes") return entries.map((e) => e.hash).join("\n");
  return entries.map((e) => `${e.hash}  ${e.name}\n`).join("");
}

export interface MirrorOptions {
  versions?: UpstreamVersions;
  platform?: Platform;
}

/** What was laid out: the binaries served, and every file written (relative to the root), checksum files too. */
export interface MirrorLayout {
  names: UpstreamBinary[];
  files: string[];
}

/**
 * Lays out `binaries` (name → a file of this machine) under root as their official releases publish them: bare
 * Kubernetes binaries hard-linked (copied across filesystems) with a bare-hash `.sha256`; etcd's and CoreDNS's
 * binaries packed into their tarballs at the published entry, with etcd's SHA256SUMS and CoreDNS's `.sha256`.
 * Binaries no release ships (agnhost, kind) are left out. Serve root with serveMirror and point mirrorEnv at it.
 */
export async function layOutMirror(
  binaries: Partial<Record<UpstreamBinary, string>>,
  root: string,
  options: MirrorOptions = {},
): Promise<MirrorLayout> {
  const versions = options.versions ?? readVersions();
  const platform = options.platform ?? goPlatform(process.platform, process.arch);
  if (!platform) throw new Error(`no release is published for ${process.platform}/${process.arch}`);
  // Any absolute base will do: only the URLs' paths are kept, each origin under its folder.
  const env: Env = mirrorEnv("http://mirror.invalid");
  const byUrl = new Map<string, { asset: ReleaseAsset; from: string }[]>();
  for (const [name, from] of Object.entries(binaries)) {
    const asset = releaseAsset(name as UpstreamBinary, versions, platform, env);
    if (asset && from) byUrl.set(asset.url, [...(byUrl.get(asset.url) ?? []), { asset, from }]);
  }
  const local = (url: string) => join(root, new URL(url).pathname);
  mkdirSync(root, { recursive: true });
  const staging = mkdtempSync(join(root, ".staging-"));
  const sums = new Map<string, { origin: ReleaseOrigin; entries: { hash: string; name: string }[] }>();
  try {
    await Promise.all(
      [...byUrl].map(async ([url, group]) => {
        const { asset } = group[0] as { asset: ReleaseAsset };
        const file = local(url);
        if (asset.entry) {
          const dir = mkdtempSync(join(staging, "archive-"));
          for (const g of group) linkOrCopy(g.from, join(dir, g.asset.entry as string));
          mkdirSync(dirname(file), { recursive: true });
          await tarCreate(
            file,
            dir,
            group.map((g) => g.asset.entry as string),
          );
        } else linkOrCopy(group[0]?.from as string, file);
        const sum = sums.get(asset.checksumUrl) ?? { origin: asset.origin, entries: [] };
        sum.entries.push({ hash: await sha256File(file), name: asset.checksumName });
        sums.set(asset.checksumUrl, sum);
      }),
    );
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  for (const [url, sum] of sums) writeFileAtomic(local(url), checksumText(sum.origin, sum.entries));
  const files = [...byUrl.keys(), ...sums.keys()].map((url) => new URL(url).pathname.slice(1)).sort();
  return { names: [...byUrl.values()].flat().map((g) => g.asset.name), files };
}

export interface ServedMirror {
  /** The server's base URL, e.g. http://127.0.0.1:8000. */
  url: string;
  /** mirrorEnv(url): the three mirror variables. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** The file under root a request path names, or undefined when it leaves root or names no file. */
function fileFor(root: string, requestPath: string): string | undefined {
  let path: string;
  try {
    path = resolve(root, `.${decodeURIComponent(requestPath.split("?")[0] ?? "")}`);
  } catch {
    return undefined;
  }
  if (!path.startsWith(`${resolve(root)}${sep}`)) return undefined;
  try {
    return statSync(path).isFile() ? path : undefined;
  } catch {
    return undefined;
  }
}

/** Serves root's files over HTTP (GET and HEAD; anything else under root a 404), until close. */
export async function serveMirror(
  root: string,
  listen: { host?: string; port?: number } = {},
): Promise<ServedMirror> {
  const server = createServer((req, res) => {
    const file = fileFor(root, req.url ?? "/");
    if (!file || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404).end("not found\n");
      return;
    }
    res.writeHead(200, { "content-length": statSync(file).size, "content-type": "application/octet-stream" });
    if (req.method === "HEAD") res.end();
    else createReadStream(file).pipe(res);
  });
  const host = listen.host ?? "127.0.0.1";
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(listen.port ?? 0, host, done);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  return {
    url,
    env: mirrorEnv(url),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
