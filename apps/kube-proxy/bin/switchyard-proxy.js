#!/usr/bin/env node
import { once } from "node:events";

// First, before anything that may not load on an older Node: the Node this package's engines asks for.
const { exitOnOldNode } = await import("@switchyard/kube/node-version");
exitOnOldNode("switchyard-proxy", new URL("../package.json", import.meta.url));

// Once, before anything else loads: a small young generation, so the peak does not depend on whether a container
// limit told V8 how much memory there is (packages/kube/src/process/young-generation.ts). SWITCHYARD_PROXY_NODE_FLAGS=keep, or a
// size given to node, keeps Node's own sizing.
const { restartWithSmallYoungGeneration } = await import("@switchyard/kube/young-generation");
restartWithSmallYoungGeneration("SWITCHYARD_PROXY_NODE_FLAGS");
const { main } = await import("../dist/main.js");

const stopSignal = Promise.race([once(process, "SIGTERM"), once(process, "SIGINT")]);
const code = await main({
  argv: process.argv.slice(2),
  stdout: process.stdout,
  stderr: process.stderr,
  stopSignal,
});
process.exit(code);
