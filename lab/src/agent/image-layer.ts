import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ImageLayer } from "./image-catalog.js";

/**
 * An image's layer as a folder under `dir`, made once: named by its content and built aside, then renamed into
 * place, so the agents of two nodes making the same one end with one folder. Undefined for a layer without files.
 * The sandbox copies it into the container's writable layer (sandbox-command.ts).
 */
export function ensureLayer(dir: string, layer: ImageLayer): string | undefined {
  if (layer.entries.length === 0) return undefined;
  const hash = createHash("sha256").update(JSON.stringify(layer.entries)).digest("hex").slice(0, 12);
  const target = join(dir, `${layer.name}-${hash}`);
  if (existsSync(target)) return target;
  const aside = `${target}.${process.pid}.tmp`;
  rmSync(aside, { recursive: true, force: true });
  mkdirSync(aside, { recursive: true });
  for (const e of layer.entries) {
    const path = join(aside, e.path);
    mkdirSync(dirname(path), { recursive: true });
    if ("link" in e) symlinkSync(e.link, path);
    else if ("dir" in e) mkdirSync(path, { recursive: true });
    else copyFileSync(e.copy, path);
  }
  try {
    renameSync(aside, target);
  } catch (err) {
    rmSync(aside, { recursive: true, force: true });
    if (!existsSync(target)) throw err;
  }
  return target;
}
