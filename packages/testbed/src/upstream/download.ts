// Fetching the official release binaries into the cache: HTTP with short timeouts (a machine without internet must
// learn it in seconds, then build from source), the SHA-256 checked before anything lands in the cache, archives
// unpacked with the system tar, and each binary renamed into place whole. Which URLs and checksums: releases.ts.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { basename, join } from "node:path";
import { writeFileAtomic } from "../write-file.js";
import type { UpstreamBinary } from "./binaries.js";
import { formatOrigin, parseChecksum, type ReleaseAsset, type ReleaseOrigin } from "./releases.js";

/** A failure to reach the server at all (refused, no DNS, timeout): the rest of that origin is not tried. */
export class UnreachableError extends Error {}

export interface NetOptions {
  /** How long until the response's headers: DNS, connect, TLS and the server's first answer. */
  headersMs?: number;
  /** How long the body may stall between two chunks. */
  idleMs?: number;
}

/** The network, as the download needs it; tests replace it or point it at a local server. */
export interface ReleaseNet {
  text(url: string): Promise<string>;
  /** Writes url's body to path and returns its SHA-256 (hex). */
  file(url: string, path: string): Promise<string>;
}

async function open(url: string, o: NetOptions): Promise<{ res: Response; controller: AbortController }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), o.headersMs ?? 5000);
  let res: Response;
  try {
    res = await fetch(url, { signal: controller.signal, redirect: "follow" });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const why = controller.signal.aborted
      ? `no answer within ${(o.headersMs ?? 5000) / 1000} s`
      : (e.cause?.code ?? e.cause?.message ?? e.message);
    throw new UnreachableError(`${new URL(url).host} unreachable: ${why}`);
  } finally {
    clearTimeout(timer);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`${url}: HTTP ${res.status}`);
  }
  return { res, controller };
}

/** Node's fetch with a deadline on the headers and on every stall of the body. */
export function httpNet(o: NetOptions = {}): ReleaseNet {
  const idleMs = o.idleMs ?? 30_000;
  async function* chunks(url: string): AsyncGenerator<Uint8Array> {
    const { res, controller } = await open(url, o);
    if (!res.body) return;
    let timer = setTimeout(() => controller.abort(), idleMs);
    try {
      for await (const chunk of res.body) {
        clearTimeout(timer);
        timer = setTimeout(() => controller.abort(), idleMs);
        yield chunk;
      }
    } catch (err) {
      if (controller.signal.aborted) throw new Error(`${url}: stalled for ${idleMs / 1000} s`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
  return {
    async text(url) {
      const parts: Uint8Array[] = [];
      for await (const chunk of chunks(url)) parts.push(chunk);
      return Buffer.concat(parts).toString("utf8");
    },
    async file(url, path) {
      const hash = createHash("sha256");
      const fd = openSync(path, "w", 0o644);
      try {
        for await (const chunk of chunks(url)) {
          hash.update(chunk);
          writeSync(fd, chunk);
        }
      } finally {
        closeSync(fd);
      }
      return hash.digest("hex");
    },
  };
}

/** Unpacks one entry of a .tar.gz with the system tar into dir. */
export function tarExtract(archive: string, entry: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("tar", ["-xzf", archive, "-C", dir, entry], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.on("error", (err) => reject(new Error(`tar: ${err.message}`)));
    child.on("close", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`tar: no ${entry} in ${basename(archive)}: ${stderr.trim()}`)),
    );
  });
}

export interface DownloadDeps {
  net: ReleaseNet;
  extract: (archive: string, entry: string, dir: string) => Promise<void>;
}

export type DownloadOutcome =
  | { name: UpstreamBinary; ok: true; url: string }
  | { name: UpstreamBinary; ok: false; reason: string };

/**
 * Downloads each asset, checks it against its published SHA-256 and installs it into binDir with a `<name>.origin`
 * beside it. Never throws: each binary gets an outcome, and a failed one is left to the source build. Once an
 * origin does not answer, its other assets are not tried; assets sharing one archive fetch it once.
 */
export async function downloadReleases(
  assets: readonly ReleaseAsset[],
  binDir: string,
  deps: DownloadDeps,
): Promise<DownloadOutcome[]> {
  mkdirSync(binDir, { recursive: true });
  const unreachable = new Map<ReleaseOrigin, string>();
  const outcomes: DownloadOutcome[] = [];
  const byUrl = new Map<string, ReleaseAsset[]>();
  for (const a of assets) byUrl.set(a.url, [...(byUrl.get(a.url) ?? []), a]);
  for (const [url, group] of byUrl) {
    // Every group holds at least one asset; they share the URL, so the origin and checksum file too.
    const first = group[0] as ReleaseAsset;
    const origin = first.origin;
    const skipped = unreachable.get(origin);
    if (skipped) {
      for (const a of group) outcomes.push({ name: a.name, ok: false, reason: skipped });
      continue;
    }
    const work = mkdtempSync(join(binDir, ".download-"));
    try {
      const expected = parseChecksum(await deps.net.text(first.checksumUrl), first.checksumName);
      const file = join(work, basename(new URL(url).pathname));
      const actual = await deps.net.file(url, file);
      if (actual !== expected)
        throw new Error(`${url}: SHA-256 ${actual} does not match the published ${expected}; refused`);
      for (const a of group) {
        let source = file;
        if (a.entry) {
          await deps.extract(file, a.entry, work);
          source = join(work, a.entry);
        }
        chmodSync(source, 0o755);
        renameSync(source, join(binDir, a.name));
        writeFileAtomic(join(binDir, `${a.name}.origin`), formatOrigin({ kind: "release", url }));
        outcomes.push({ name: a.name, ok: true, url });
      }
    } catch (err) {
      const reason = (err as Error).message;
      if (err instanceof UnreachableError) unreachable.set(origin, reason);
      for (const a of group)
        if (!outcomes.some((o) => o.name === a.name)) outcomes.push({ name: a.name, ok: false, reason });
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  return outcomes;
}
