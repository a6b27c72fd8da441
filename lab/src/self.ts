import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const fromSource = fileURLToPath(import.meta.url).endsWith(".ts");

/**
 * The command that runs one of the lab's own entry points (`agent/main`, `agent/echo`) as a process: the compiled
 * file normally; the source through tsx when the lab itself runs from source (its tests), so tests never need a
 * build first.
 */
export function labEntry(relative: string): string[] {
  const file = join(here, `${relative}${fromSource ? ".ts" : ".js"}`);
  if (!fromSource) return [process.execPath, file];
  return [process.execPath, "--import", import.meta.resolve("tsx"), file];
}

/** The repository root (lab/..), where the apps' bins live. */
export const repoRoot = join(here, "..", "..");
