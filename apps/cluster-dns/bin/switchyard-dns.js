#!/usr/bin/env node
// The cluster DNS server's command (also installed as `coredns` in the image). It runs the compiled
// code; on a fresh clone it builds it first.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// V8 sizes its young generation from the memory it sees: with no container limit on a big machine each
// semi-space may grow to 32-64 MiB, and a DNS server under load then holds that much more garbage at its
// peak than the same server under kubeadm's 170Mi limit (where Node already picks about 1 MiB). Two MiB
// keeps the peak the same with or without a limit at the same throughput (bench/results/resolver-memory.md).
// Where Node can replace its own process (process.execve, Node 22.15+), the command starts itself again
// once with the flag, keeping its pid; a semi-space or heap size the user gave in NODE_OPTIONS or on node's
// command line wins, and so does SWITCHYARD_DNS_NODE_FLAGS=keep.
const YOUNG_GENERATION = "--max-semi-space-size=2";
const chosen = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((a) =>
  /^--(max-semi-space-size|max-heap-size|semi-space-growth-factor)\b/.test(a),
);
if (!chosen && process.env.SWITCHYARD_DNS_NODE_FLAGS !== "keep" && typeof process.execve === "function") {
  try {
    process.execve(process.execPath, [
      process.execPath,
      YOUNG_GENERATION,
      ...process.execArgv,
      ...process.argv.slice(1),
    ]);
  } catch {
    // Not allowed here (a worker thread, an unusual platform): run with Node's own sizing.
  }
}

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = join(appDir, "dist", "run.js");
if (!existsSync(entry)) {
  console.error("switchyard-dns: first run, compiling (npm run build -w @switchyard/cluster-dns)...");
  const r = spawnSync("npm", ["run", "build", "--silent"], { cwd: appDir, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const { run } = await import(entry);
await run(process.argv.slice(2));
