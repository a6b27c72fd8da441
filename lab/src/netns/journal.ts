import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { Undo } from "./steps.js";

/**
 * The record of what the lab created, one JSON line per undo, appended before the object is created: a crash
 * between the two leaves an undo for something that may not exist, which teardown tolerates, and never the
 * opposite. The `up` process and every node agent append to the same file (small O_APPEND writes do not tear).
 */
export class Journal {
  constructor(readonly path: string) {}

  record(undo: Undo): void {
    appendFileSync(this.path, `${JSON.stringify(undo)}\n`);
  }

  /** Every recorded undo, oldest first, each once. */
  read(): Undo[] {
    if (!existsSync(this.path)) return [];
    const seen = new Set<string>();
    const out: Undo[] = [];
    for (const line of readFileSync(this.path, "utf8").split("\n")) {
      if (!line.trim() || seen.has(line)) continue;
      seen.add(line);
      out.push(JSON.parse(line) as Undo);
    }
    return out;
  }
}
