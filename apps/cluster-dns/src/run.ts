import { main } from "./main.js";

/**
 * The process around main(): exit codes, and signals as CoreDNS handles them. SIGTERM and SIGINT start
 * a lameduck shutdown and exit when it is over; SIGUSR1 reloads the Corefile.
 */
export async function run(argv: readonly string[]): Promise<void> {
  const result = await main(argv);
  if (typeof result === "number") {
    process.exitCode = result;
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
