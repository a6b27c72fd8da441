// Runs switchyard-proxy from source, for tests (the bin runs the built dist/).
import { once } from "node:events";
import { main } from "../src/main.js";

const stopSignal = Promise.race([once(process, "SIGTERM"), once(process, "SIGINT")]);
process.exit(
  await main({ argv: process.argv.slice(2), stdout: process.stdout, stderr: process.stderr, stopSignal }),
);
