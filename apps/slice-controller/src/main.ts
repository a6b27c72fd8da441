import { Logger, levelFromVerbosity } from "@switchyard/kube";
import { versionAsked } from "@switchyard/kube/flags";
import { startApp } from "./app.js";
import { FlagError, parseFlags, usage } from "./cli/flags.js";
import { ignoredFlagNotes } from "./cli/ignored-flags.js";
import { versionText } from "./version.js";

const PROGRAM = "switchyard-slice-controller";

export interface MainIO {
  argv: readonly string[];
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** Resolves when the process is told to stop (SIGTERM/SIGINT). */
  stopSignal: Promise<unknown>;
}

/**
 * The program: parse flags, start, run until a signal or until leadership is lost. Returns the exit
 * code: 0 after a clean stop, 1 for a failure or a lost Lease, 2 for a bad command line.
 */
export async function main(io: MainIO): Promise<number> {
  let flags: ReturnType<typeof parseFlags>;
  try {
    flags = parseFlags(io.argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    io.stderr.write(`${PROGRAM}: ${err.message}\n`);
    return 2;
  }
  if (flags.help) {
    io.stdout.write(usage(PROGRAM));
    return 0;
  }
  const version = versionAsked(flags.version);
  if (version !== "") {
    io.stdout.write(`${versionText(version === "raw")}\n`);
    return 0;
  }
  const logger = new Logger({ ...levelFromVerbosity(flags.verbosity), out: io.stderr });
  // kube-controller-manager flags with nothing to act on here: said once, so nobody expects them to take effect.
  for (const note of ignoredFlagNotes(flags.given)) logger.info("flag accepted but ignored", note);
  let app: Awaited<ReturnType<typeof startApp>>;
  try {
    app = await startApp(flags, { logger });
  } catch (err) {
    io.stderr.write(`${PROGRAM}: ${(err as Error).message}\n`);
    return 1;
  }
  logger.info("started", {
    identity: app.identity,
    metrics: app.metricsAddress ?? "disabled",
    healthz: app.healthzAddress ?? "disabled",
    leaderElect: flags.leaderElect,
  });
  const outcome = await Promise.race([app.done, io.stopSignal.then(() => "signal" as const)]);
  await app.stop();
  if (outcome === "leadership-lost") {
    logger.error("leader election lost");
    return 1;
  }
  return 0;
}
