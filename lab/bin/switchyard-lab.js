#!/usr/bin/env node
// The lab's command. It runs the compiled CLI; on a fresh clone it builds it first. In a clone of the repository,
// on another Node line than the project's (.node-version) it runs itself again under the project's Node, with the
// script that `npm test`, `npm run lab` and CI use: the pods it starts run on this process's node, and the stack's
// dependencies need the project's line. Installed on its own, with no repository around it, it needs nothing
// outside this package: it stops with one line when Node is older than its package.json engines.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const labDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const projectNode = join(labDir, "..", "scripts", "project-node.mjs");
if (existsSync(join(labDir, "..", ".node-version")) && existsSync(projectNode)) {
  const { ensureProjectNode, runningWantedMajor } = await import(pathToFileURL(projectNode).href);
  if (!runningWantedMajor()) {
    const node = ensureProjectNode();
    const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}` };
    const again = spawnSync(node, process.argv.slice(1), { stdio: "inherit", env });
    process.exit(again.status ?? 1);
  }
} else {
  const { exitOnOldNode } = await import("@switchyard/kube/node-version");
  exitOnOldNode("switchyard-lab", new URL("../package.json", import.meta.url));
}
const entry = join(labDir, "dist", "cli", "bin.js");
if (!existsSync(entry)) {
  console.error("switchyard-lab: first run, compiling the lab (npm run build -w @switchyard/lab)...");
  const r = spawnSync("npm", ["run", "build", "--silent"], { cwd: labDir, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
await import(entry);
