// The command as a process: lab/bin/switchyard-lab.js imports this (after choosing the Node and building), and
// tests run it from source through tsx.
import { main } from "./main.js";

process.exitCode = await main(process.argv.slice(2));
