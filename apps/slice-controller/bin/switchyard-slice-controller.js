#!/usr/bin/env node
import { once } from "node:events";

// First, before anything that may not load on an older Node: the Node this package's engines asks for.
const { exitOnOldNode } = await import("@switchyard/kube/node-version");
exitOnOldNode("switchyard-slice-controller", new URL("../package.json", import.meta.url));

// No restart with a small young generation here, unlike switchyard-proxy and switchyard-dns: ingesting many Pods'
// watch events with a 2 MiB semi-space, the peak grew (likely short-lived objects promoted; npm run bench --
// slice-controller, 2026-12-04: 439 MiB VmHWM with it, 329 MiB with Node's own sizing; kube-controller-manager 273-278).
const { main } = await import("../dist/main.js");

const stopSignal = Promise.race([once(process, "SIGTERM"), once(process, "SIGINT")]);
const code = await main({
  argv: process.argv.slice(2),
  stdout: process.stdout,
  stderr: process.stderr,
  stopSignal,
});
process.exit(code);
