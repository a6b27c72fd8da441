#!/usr/bin/env node
// npm run bench -- <name> [args]: runs bench/<name>.bench.ts through tsx. Each benchmark prints a table and
// writes it, with the machine it ran on, to bench/results/<name>.md. Without a name, lists them.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const here = import.meta.dirname;
const available = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .map((f) => f.replace(/\.bench\.ts$/, ""));
const [name, ...args] = process.argv.slice(2);
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join("|")}> [args]`);
  process.exit(name ? 2 : 0);
}
const r = spawnSync(process.execPath, ["--import", "tsx", join(here, `${name}.bench.ts`), ...args], {
  stdio: "inherit",
  cwd: join(here, ".."),
});
process.exit(r.status ?? 1);
