#!/usr/bin/env node
// The lab's command. It runs the compiled CLI; on a fresh clone it builds it first. On another Node line than the
// project's (.node-version) it runs itself again under the project's Node, as scripts/run.mjs does: the pods it
// starts run on this process's node, and the stack's dependencies need the project's line.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureProjectNode, runningWantedMajor } from "../../scripts/project-node.mjs";

const labDir = join(dirname(fileURLToPath(import.meta.url)), "..");
if (!runningWantedMajor()) {
  const node = ensureProjectNode();
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}` };
  const again = spawnSync(node, process.argv.slice(1), { stdio: "inherit", env });
  process.exit(again.status ?? 1);
}
const entry = join(labDir, "dist", "cli", "bin.js");
if (!existsSync(entry)) {
  console.error("switchyard-lab: first run, compiling the lab (npm run build -w @switchyard/lab)...");
  const r = spawnSync("npm", ["run", "build", "--silent"], { cwd: labDir, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
await import(entry);
