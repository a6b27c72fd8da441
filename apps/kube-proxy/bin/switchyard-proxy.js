#!/usr/bin/env node
import { once } from "node:events";
import { main } from "../dist/main.js";

const stopSignal = Promise.race([once(process, "SIGTERM"), once(process, "SIGINT")]);
const code = await main({
  argv: process.argv.slice(2),
  stdout: process.stdout,
  stderr: process.stderr,
  stopSignal,
});
process.exit(code);
