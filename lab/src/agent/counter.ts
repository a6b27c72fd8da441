/**
 * The lab's log workload (image `switchyard/counter`): prints a numbered line (`line 1`, `line 2`, ...) every
 * --interval-ms (200 by default) on stdout, and with --exit-after N exits with code 1 after its N-th line, so a
 * pod with restartPolicy Always restarts it: what `kubectl logs`, `-f` and `--previous` are tested against. With
 * --stderr each line is followed by `warn N` on stderr, for the log's two streams.
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    "interval-ms": { type: "string", default: "200" },
    "exit-after": { type: "string" },
    stderr: { type: "boolean", default: false },
  },
});
const intervalMs = Number(values["interval-ms"]);
const exitAfter = values["exit-after"] === undefined ? undefined : Number(values["exit-after"]);
if (!Number.isInteger(intervalMs) || intervalMs < 1)
  throw new Error(`--interval-ms must be a positive integer, got "${values["interval-ms"]}"`);
if (exitAfter !== undefined && (!Number.isInteger(exitAfter) || exitAfter < 1))
  throw new Error(`--exit-after must be a positive integer, got "${values["exit-after"]}"`);

let n = 0;
const timer = setInterval(() => {
  n++;
  process.stdout.write(`line ${n}\n`);
  if (values.stderr) process.stderr.write(`warn ${n}\n`);
  if (n === exitAfter) {
    clearInterval(timer);
    process.exitCode = 1;
  }
}, intervalMs);
process.on("SIGTERM", () => process.exit(0));
