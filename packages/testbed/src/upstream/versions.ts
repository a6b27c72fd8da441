import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The pinned upstream releases. upstream/versions.json (beside src/) is the one place they are written down. */
export interface UpstreamVersions {
  kubernetes: string;
  etcd: string;
  coredns: string;
  /** The kind CLI, built only when the kind runtime needs it (optional so older files still read). */
  kind?: string;
}

/** This package's upstream/ folder, found relative to this file whether it runs from src (tsx) or dist. */
export const upstreamDir: string = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "upstream");

export function readVersions(dir: string = upstreamDir): UpstreamVersions {
  const path = join(dir, "versions.json");
  const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<UpstreamVersions>;
  for (const key of ["kubernetes", "etcd", "coredns"] as const) {
    const value = parsed[key];
    if (typeof value !== "string" || !/^v\d+\.\d+\.\d+$/.test(value)) {
      throw new Error(`${path}: "${key}" must be a version like v1.2.3, got ${JSON.stringify(value)}`);
    }
  }
  if (parsed.kind !== undefined && !/^v\d+\.\d+\.\d+$/.test(parsed.kind))
    throw new Error(`${path}: "kind" must be a version like v1.2.3, got ${JSON.stringify(parsed.kind)}`);
  return parsed as UpstreamVersions;
}

/** "v1.37.2" → { major: "1", minor: "37" }, as the Kubernetes build stamps them. */
export function majorMinor(version: string): { major: string; minor: string } {
  const match = /^v(\d+)\.(\d+)\./.exec(version);
  if (!match?.[1] || !match[2]) throw new Error(`not a semantic version: ${version}`);
  return { major: match[1], minor: match[2] };
}
