// The oldest Node a program runs on is the lower bound of its package.json `engines.node`, the one place it is
// written. npm only warns about `engines` (unless the user set engine-strict), so each program checks it again
// as the first thing it does and stops with one line instead of failing later in a way that names no cause.
// Only the lower bound is enforced: a newer Node line than the tested one is likely to work, an older one is not
// what the project runs its tests, benches and images on.
import { readFileSync } from "node:fs";

/** Dotted versions compared part by part, a missing part as 0: "1.26" is at least "1.26.0". */
export function versionAtLeast(found: string, wanted: string): boolean {
  const f = found.split(".").map(Number);
  const w = wanted.split(".").map(Number);
  for (let i = 0; i < Math.max(f.length, w.length); i++) {
    const a = f[i] ?? 0;
    const b = w[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

const dotted = (text: string) => /\d+\.\d+\.\d+/.exec(text)?.[0];

/**
 * The one-line error when `running` (process.versions.node) is older than the first version in `engines`
 * ("^24.11.0", ">=24.11.0"); undefined when it is not, or when `engines` names no version.
 */
export function oldNodeMessage(program: string, running: string, engines: string): string | undefined {
  const minimum = dotted(engines);
  const current = dotted(running);
  if (!minimum || !current || versionAtLeast(current, minimum)) return undefined;
  return `${program}: needs Node ${minimum} or newer (package.json engines "${engines}"), this is Node ${running}`;
}

/** Exits with oldNodeMessage when this Node is older than what `manifest` (a package.json) asks for. */
export function exitOnOldNode(program: string, manifest: URL): void {
  const { engines } = JSON.parse(readFileSync(manifest, "utf8")) as { engines?: { node?: string } };
  const message = engines?.node && oldNodeMessage(program, process.versions.node, engines.node);
  if (!message) return;
  console.error(message);
  process.exit(1);
}
