import cluster from "node:cluster";
import { parseFlags } from "./flags.js";
import { reportFatal, supervise, WORKER_ENV } from "./supervise.js";

/**
 * The process around main(): exit codes, and signals as CoreDNS handles them. SIGTERM and SIGINT start
 * a lameduck shutdown and exit when it is over; SIGUSR1 reloads the Corefile. With `-workers N` (N > 1)
 * this process only supervises, and each worker runs main().
 */
export async function run(argv: readonly string[]): Promise<void> {
  if (cluster.isPrimary) {
    const flags = serving(argv);
    if (flags && flags.workers > 1) {
      supervise(flags, {
        log: (line) => process.stdout.write(`${line}\n`),
        fatal: (line) => process.stderr.write(`${line}\n`),
      });
      return;
    }
  }
  const worker = cluster.isWorker ? { index: Number(process.env[WORKER_ENV] ?? "1") } : undefined;
  // Loaded here, not at the top: the primary of `-workers` never needs the resolver.
  const { main, processIo } = await import("./main.js");
  // A worker's startup error goes to the primary, which prints it once for all workers.
  const fatal: string[] = [];
  const io = worker ? { ...processIo, err: (line: string) => fatal.push(line) } : processIo;
  const result = await main(argv, io, worker);
  if (typeof result === "number") {
    // Exits now, as CoreDNS's log.Fatal does: listeners a failed start did open (health, metrics) and a
    // worker's IPC channel would keep the process alive.
    if (worker && fatal.length > 0) reportFatal(fatal, () => process.exit(result));
    else process.exit(result);
    return;
  }
  const stop = (signal: NodeJS.Signals) => {
    result.shutdown(signal).then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`switchyard-dns: shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("SIGUSR1", () => {
    process.stdout.write("[INFO] SIGUSR1: Reloading\n");
    void result.reload();
  });
}

/** The flags when they ask to serve DNS; undefined for bad flags and -help/-version/-plugins (main() handles those). */
function serving(argv: readonly string[]) {
  if (argv.some((a) => /^--?(help|h)$/.test(a))) return undefined;
  try {
    const flags = parseFlags(argv);
    return flags.version || flags.plugins ? undefined : flags;
  } catch {
    return undefined;
  }
}
