import { readFileSync, writeFileSync } from "node:fs";
import { parseGoDuration } from "@switchyard/basics";
import { Logger, levelFromVerbosity } from "@switchyard/kube";
import { type Exec, newRealExec, realExec } from "@switchyard/proxier";
import { type App, cleanupAndExit, initOnlyAndExit, startApp } from "./app.js";
import {
  type CommandLine,
  FlagError,
  ignoredWithConfig,
  notActedOn,
  parseCommandLine,
  usage,
  withDeprecatedPorts,
} from "./cli/flags.js";
import { defaultConfig, type ProxyConfig, type ResolvedOptions, resolve } from "./config/config.js";
import { ConfigError, parseConfigFile, strictDecodingError } from "./config/config-file.js";
import { renderV1alpha1, toV1alpha1 } from "./config/v1alpha1.js";
import { validateConfig } from "./config/validate.js";
import { watchConfigFile } from "./config/watch-file.js";
import { NetworkConfigError } from "./network.js";
import { versionText } from "./version.js";

export const PROGRAM = "switchyard-proxy";

export interface MainIO {
  argv: readonly string[];
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** Resolves when the process is told to stop (SIGTERM/SIGINT). */
  stopSignal: Promise<unknown>;
  /**
   * The environment; process.env when unset. SWITCHYARD_PROXY_CLEANUP, SWITCHYARD_PROXY_CONNTRACK and
   * SWITCHYARD_PROXY_EXEC_TIMEOUT are read from it.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * A switch between our behaviour (the default value, false) and upstream's (the other value, true) read from the
 * environment; anything else is refused with one line, before anything changes.
 */
function upstreamWay(env: Env, name: string, ours: string, upstreams: string): boolean {
  const value = env[name] ?? ours;
  if (value === ours) return false;
  if (value === upstreams) return true;
  throw new Error(`${name}=${JSON.stringify(value)}: want "${ours}" (default) or "${upstreams}"`);
}

/**
 * When the other modes' rules go: "after-first-sync" (the default, no window without Service rules) or
 * "before-first-sync" (upstream's order).
 */
export const cleanupBeforeFirstSyncFrom = (env: Env): boolean =>
  upstreamWay(env, "SWITCHYARD_PROXY_CLEANUP", "after-first-sync", "before-first-sync");

/**
 * Which UDP conntrack entries the reconciler removes: "drain-terminating" (the default: also finished exchanges with
 * a terminating endpoint the rules no longer choose, which expire within a second, so a DNS pod's exit after its
 * lameduck loses no lookup) or "upstream" (only entries to endpoints that stopped serving, deleted).
 */
export const keepFlowsToTerminatingFrom = (env: Env): boolean =>
  upstreamWay(env, "SWITCHYARD_PROXY_CONNTRACK", "drain-terminating", "upstream");

/**
 * How the kernel tools (nft, iptables-restore, iptables-save, ipset, conntrack, ...) are run: each with a time limit,
 * DEFAULT_EXEC_TIMEOUT_MS unless SWITCHYARD_PROXY_EXEC_TIMEOUT gives another as a Go duration ("90s", "2m"; "0" for
 * none). kube-proxy has no such setting. Anything else is refused with one line.
 */
export function execFrom(env: Env): Exec {
  const text = env.SWITCHYARD_PROXY_EXEC_TIMEOUT;
  if (text === undefined) return realExec;
  const ms = parseGoDuration(text);
  if (ms === undefined || ms < 0) {
    throw new Error(
      `SWITCHYARD_PROXY_EXEC_TIMEOUT=${JSON.stringify(text)}: want a duration such as "90s" or "2m" ("0" for no limit)`,
    );
  }
  return newRealExec({ timeoutMs: ms });
}

/**
 * Flags and config file into one configuration, as upstream combines them. Unknown or duplicate fields of the
 * file go onto `strict` (upstream logs them and runs).
 */
export function loadConfiguration(
  cl: CommandLine,
  read: (path: string) => string,
  strict: string[] = [],
  loadedText: { text?: string } = {},
): ProxyConfig {
  const file = cl.configFile;
  const c = file === undefined ? configFromFlags(cl) : configFromFile(cl, file, read, strict, loadedText);
  // Upstream's Validate runs on the complete configuration either way.
  const invalid = validateConfig(c);
  if (invalid !== undefined) throw file === undefined ? new FlagError(invalid) : new ConfigError(invalid);
  return c;
}

function configFromFlags(cl: CommandLine): ProxyConfig {
  const flags = cl.apply(defaultConfig(), false);
  return cl.writeConfigTo === undefined ? withDeprecatedPorts(flags, cl.deprecatedPorts) : flags;
}

function configFromFile(
  cl: CommandLine,
  path: string,
  read: (path: string) => string,
  strict: string[],
  loadedText: { text?: string },
): ProxyConfig {
  let text: string;
  try {
    text = read(path);
  } catch (err) {
    throw new ConfigError(`cannot read --config ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  loadedText.text = text;
  return cl.apply(parseConfigFile(text, strict), true);
}

/**
 * The program. Exit codes: 0 after a clean stop or a finished --cleanup, 1 when it cannot
 * run or its --config file's content changed (as upstream, so the kubelet restarts it with the
 * new file), 2 for a bad flag or config field (one line naming it).
 */
export async function main(io: MainIO): Promise<number> {
  let cl: CommandLine;
  let config: ProxyConfig;
  const strict: string[] = [];
  const loaded: { text?: string } = {};
  try {
    cl = parseCommandLine(io.argv);
    if (cl.help) {
      io.stdout.write(usage(PROGRAM));
      return 0;
    }
    if (cl.version) {
      io.stdout.write(`${versionText(cl.version === "raw")}\n`);
      return 0;
    }
    config = loadConfiguration(cl, (p) => readFileSync(p, "utf8"), strict, loaded);
  } catch (err) {
    if (!(err instanceof FlagError || err instanceof ConfigError)) throw err;
    io.stderr.write(`${PROGRAM}: ${err.message}\n`);
    return 2;
  }
  const options = resolve(config);
  const logger = new Logger({ ...levelFromVerbosity(options.verbosity), out: io.stderr });
  if (cl.writeConfigTo !== undefined) return writeConfig(cl.writeConfigTo, config, logger, io);
  const lenient = strictDecodingError(strict);
  if (lenient) logger.info("Using lenient decoding as strict decoding failed", { err: lenient });
  if (notActedOn(cl).length > 0) logger.info("flags accepted but not acted on", { flags: notActedOn(cl) });
  if (cl.configFile !== undefined && ignoredWithConfig(cl).length > 0) {
    logger.warn("flags ignored because --config is set (as upstream)", { flags: ignoredWithConfig(cl) });
  }
  let exec: Exec;
  try {
    exec = execFrom(io.env ?? process.env);
  } catch (err) {
    io.stderr.write(`${PROGRAM}: ${(err as Error).message}\n`);
    return 1;
  }
  if (cl.cleanup) {
    try {
      await cleanupAndExit(exec, options.ebpf.bpfRoot);
      logger.info("cleanup done");
      return 0;
    } catch (err) {
      io.stderr.write(`${PROGRAM}: cleanup: ${(err as Error).message}\n`);
      return 1;
    }
  }
  if (cl.initOnly) return initOnly(options, cl.master, exec, logger, io);
  applyOomScoreAdj(options.oomScoreAdj, logger);
  let app: App;
  try {
    const cleanupBeforeFirstSync = cleanupBeforeFirstSyncFrom(io.env ?? process.env);
    const keepFlowsToTerminating = keepFlowsToTerminatingFrom(io.env ?? process.env);
    app = await startApp(options, {
      logger,
      exec,
      master: cl.master,
      configz: toV1alpha1(config),
      cleanupBeforeFirstSync,
      keepFlowsToTerminating,
    });
  } catch (err) {
    io.stderr.write(`${PROGRAM}: ${(err as Error).message}\n`);
    return err instanceof NetworkConfigError ? 2 : 1;
  }
  let stopWatch = () => {};
  const configChanged = new Promise<"changed">((resolve) => {
    if (cl.configFile !== undefined && loaded.text !== undefined)
      stopWatch = watchConfigFile(cl.configFile, loaded.text, () => resolve("changed"));
  });
  const why = await Promise.race([io.stopSignal, configChanged]);
  stopWatch();
  if (why === "changed") {
    // Upstream returns this error from Run and exits 1; the kubelet then starts it with the new file.
    logger.error("content of the proxy server's configuration file was updated", { config: cl.configFile });
    await app.stop();
    return 1;
  }
  logger.info("stopping", { node: app.nodeName });
  await app.stop();
  return 0;
}

/**
 * `--init-only`: exit 0 once the node is initialized. As upstream, the OOM score is left alone (its Run, which
 * sets it, is never reached) and a failure exits as a failed start does.
 */
async function initOnly(
  options: ResolvedOptions,
  master: string,
  exec: Exec,
  logger: Logger,
  io: MainIO,
): Promise<number> {
  try {
    await initOnlyAndExit(options, { logger, master, exec });
    return 0;
  } catch (err) {
    io.stderr.write(`${PROGRAM}: ${(err as Error).message}\n`);
    return err instanceof NetworkConfigError ? 2 : 1;
  }
}

/** `--write-config-to`: the v1alpha1 file upstream writes for the same flags or file, then exit 0. */
function writeConfig(path: string, config: ProxyConfig, logger: Logger, io: MainIO): number {
  try {
    writeFileSync(path, renderV1alpha1(config));
  } catch (err) {
    // Node's message names the cause in words, as upstream's does: "ENOSPC: no space left on device, write".
    io.stderr.write(`${PROGRAM}: --write-config-to ${path}: ${(err as Error).message}\n`);
    return 1;
  }
  logger.info("Wrote configuration", { file: path });
  return 0;
}

/**
 * The process's OOM score adjustment, as upstream sets it before anything else runs (server.go): the kernel
 * kills a proxy last, since a node without one loses its Services. Failing (no privilege) is logged, not fatal.
 */
export function applyOomScoreAdj(
  value: number,
  logger: Logger,
  write: (path: string, text: string) => void = writeFileSync,
): void {
  try {
    write("/proc/self/oom_score_adj", `${value}`);
  } catch (err) {
    // Upstream logs this at V(2): a container without CAP_SYS_RESOURCE cannot lower its score, and that is fine.
    logger.debug("Failed to apply OOMScore", { err: (err as Error).message });
  }
}
