#!/usr/bin/env node
// The cluster DNS server's command (also installed as `coredns` in the image). It runs the compiled
// code; on a fresh clone it builds it first.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// First, before anything that may not load on an older Node: the Node this package's engines asks for.
const { exitOnOldNode } = await import("@switchyard/kube/node-version");
exitOnOldNode("switchyard-dns", new URL("../package.json", import.meta.url));

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = join(appDir, "dist", "run.js");
if (!existsSync(entry)) {
  console.error("switchyard-dns: first run, compiling (npm run build -w @switchyard/cluster-dns)...");
  const r = spawnSync("npm", ["run", "build", "--silent"], { cwd: appDir, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
// Once, before the server loads: a small young generation keeps the peak the same with or without a container
// limit at the same throughput (bench/results/resolver-memory.md). SWITCHYARD_DNS_NODE_FLAGS=keep, or a size
// given to node, keeps Node's own sizing.
const { restartWithSmallYoungGeneration } = await import("@switchyard/kube/young-generation");
restartWithSmallYoungGeneration("SWITCHYARD_DNS_NODE_FLAGS");
const { run } = await import(entry);
await run(process.argv.slice(2));
