#!/usr/bin/env node
// The lab's command. It runs the compiled CLI; on a fresh clone it builds it first.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const labDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = join(labDir, "dist", "cli", "main.js");
if (!existsSync(entry)) {
  console.error("switchyard-lab: first run, compiling the lab (npm run build -w @switchyard/lab)...");
  const r = spawnSync("npm", ["run", "build", "--silent"], { cwd: labDir, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const { main } = await import(entry);
process.exitCode = await main(process.argv.slice(2));
