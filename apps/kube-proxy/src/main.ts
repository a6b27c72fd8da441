import { readFileSync } from "node:fs";
import { Logger, levelFromVerbosity } from "@switchyard/kube";
import { type App, cleanupAndExit, startApp } from "./app.js";
import { type CommandLine, FlagError, ignoredWithConfig, parseCommandLine, usage } from "./cli/flags.js";
import { defaultConfig, type ProxyConfig, resolve } from "./config/config.js";
import { ConfigError, parseConfigFile, strictDecodingError } from "./config/config-file.js";
import { NetworkConfigError } from "./network.js";

export const PROGRAM = "switchyard-proxy";

export interface MainIO {
  argv: readonly string[];
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** Resolves when the process is told to stop (SIGTERM/SIGINT). */
  stopSignal: Promise<unknown>;
}

/**
 * Flags and config file into one configuration, as upstream combines them. Unknown or duplicate fields of the
 * file go onto `strict` (upstream logs them and runs).
 */
export function loadConfiguration(
  cl: CommandLine,
  read: (path: string) => string,
  strict: string[] = [],
): ProxyConfig {
  if (cl.configFile === undefined) return cl.apply(defaultConfig(), false);
  let text: string;
  try {
    text = read(cl.configFile);
  } catch (err) {
    throw new ConfigError(
      `cannot read --config ${cl.configFile}: ${(err as NodeJS.ErrnoException).code ?? err}`,
    );
  }
  return cl.apply(parseConfigFile(text, strict), true);
}

/**
 * The program. Exit codes: 0 after a clean stop or a finished --cleanup, 1 when it cannot
 * run, 2 for a bad flag or config field (one line naming it).
 */
export async function main(io: MainIO): Promise<number> {
  let cl: CommandLine;
  let config: ProxyConfig;
  const strict: string[] = [];
  try {
    cl = parseCommandLine(io.argv);
    if (cl.help) {
      io.stdout.write(usage(PROGRAM));
      return 0;
    }
    config = loadConfiguration(cl, (p) => readFileSync(p, "utf8"), strict);
  } catch (err) {
    if (!(err instanceof FlagError || err instanceof ConfigError)) throw err;
    io.stderr.write(`${PROGRAM}: ${err.message}\n`);
    return 2;
  }
  const options = resolve(config);
  const logger = new Logger({ ...levelFromVerbosity(options.verbosity), out: io.stderr });
  const lenient = strictDecodingError(strict);
  if (lenient) logger.info("Using lenient decoding as strict decoding failed", { err: lenient });
  if (cl.configFile !== undefined && ignoredWithConfig(cl).length > 0) {
    logger.warn("flags ignored because --config is set (as upstream)", { flags: ignoredWithConfig(cl) });
  }
  if (cl.cleanup) {
    try {
      await cleanupAndExit();
      logger.info("cleanup done");
      return 0;
    } catch (err) {
      io.stderr.write(`${PROGRAM}: cleanup: ${(err as Error).message}\n`);
      return 1;
    }
  }
  let app: App;
  try {
    app = await startApp(options, { logger });
  } catch (err) {
    io.stderr.write(`${PROGRAM}: ${(err as Error).message}\n`);
    return err instanceof NetworkConfigError ? 2 : 1;
  }
  await io.stopSignal;
  logger.info("stopping", { node: app.nodeName });
  await app.stop();
  return 0;
}
