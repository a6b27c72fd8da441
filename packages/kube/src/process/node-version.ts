// The oldest Node a program runs on is the lower bound of its package.json `engines.node`, the one place it is
// written. npm only warns about `engines` (unless the user set engine-strict), so each program checks it again
// as the first thing it does and stops with one line instead of failing later in a way that names no cause.
// Only the lower bound is enforced: a newer Node line than the tested one is likely to work, an older one is not
// what the project runs its tests, benches and images on.
import { readFileSync } from "node:fs";

/** Major, minor and patch, compared in that order. */
type Version = readonly [number, number, number];

function parseVersion(text: string): Version | undefined {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

function older(a: Version, b: Version): boolean {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
}

/**
 * The one-line error when `running` (process.versions.node) is older than the first version in `engines`
 * ("^24.11.0", ">=24.11.0"); undefined when it is not, or when `engines` names no version.
 */
export function oldNodeMessage(program: string, running: string, engines: string): string | undefined {
  const minimum = parseVersion(engines);
  const current = parseVersion(running);
  if (!minimum || !current || !older(current, minimum)) return undefined;
  return `${program}: needs Node ${minimum.join(".")} or newer (package.json engines "${engines}"), this is Node ${running}`;
}

/** Exits with oldNodeMessage when this Node is older than what `manifest` (a package.json) asks for. */
export function exitOnOldNode(program: string, manifest: URL): void {
  const { engines } = JSON.parse(readFileSync(manifest, "utf8")) as { engines?: { node?: string } };
  const message = engines?.node && oldNodeMessage(program, process.versions.node, engines.node);
  if (!message) return;
  console.error(message);
  process.exit(1);
}
