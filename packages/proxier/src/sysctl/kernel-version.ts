// The running kernel's version, read as kube-proxy reads it (/proc/sys/kernel/osrelease),
// for settings that depend on it (IPVS's conn_reuse_mode).
import type { SettingFiles } from "./node-setting.js";

export const KERNEL_OSRELEASE = "/proc/sys/kernel/osrelease";

/** Major, minor, patch; missing parts are 0. */
export type KernelVersion = readonly [number, number, number];

export class KernelVersionError extends Error {
  override name = "KernelVersionError";
}

/**
 * "6.18.44-fc-v657" → [6, 18, 44]. Like a generic version parse upstream: at least
 * major.minor, and whatever follows the numbers ("-fc-v657", "+") is ignored.
 */
export function parseKernelVersion(text: string): KernelVersion | undefined {
  const m = /^\s*v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

/** Throws KernelVersionError in upstream's words when the file is unreadable or unparsable. */
export async function readKernelVersion(files: SettingFiles): Promise<KernelVersion> {
  let text: string;
  try {
    text = await files.read(KERNEL_OSRELEASE);
  } catch (err) {
    throw new KernelVersionError(`failed to read os-release file: ${(err as Error).message}`);
  }
  const v = parseKernelVersion(text);
  if (!v) throw new KernelVersionError(`failed to parse kernel version: could not parse "${text.trim()}"`);
  return v;
}

/** a < b, comparing major, minor, patch in turn. */
export function kernelBefore(a: KernelVersion, b: KernelVersion): boolean {
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return false;
}
