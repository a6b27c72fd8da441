import { readFileSync, statSync } from "node:fs";
import { Metrics } from "../../metrics/metrics.js";
import type { Setup } from "../../plugin/setup.js";
import { onlyOnce, stanzaError } from "../../plugin/setup.js";
import type { Timers } from "../../server/timers.js";
import { systemTimers } from "../../server/timers.js";
import { HostsHandler } from "./handler.js";
import type { HostsFiles } from "./hosts-data.js";
import { HostsData } from "./hosts-data.js";
import { hostsMetrics } from "./metrics.js";
import type { HostsOptions } from "./options.js";
import { parseHostsStanza } from "./options.js";
import { periodically } from "./periodic.js";

const PLUGIN = "hosts";

export interface HostsDeps {
  /** How the hosts file is read; node:fs by default. */
  hostsFiles?: HostsFiles;
  /** Drives the periodic look at the file. */
  timers?: Timers;
  metrics?: Metrics;
  /** Where `[WARNING] plugin/hosts: ...` lines go; stdout by default, as CoreDNS. */
  log?: (line: string) => void;
}

export const nodeHostsFiles: HostsFiles = {
  stat(path) {
    const s = statSync(path);
    return { mtimeMs: s.mtimeMs, size: s.size, isDirectory: s.isDirectory() };
  },
  read: (path) => readFileSync(path, "utf8"),
};

/**
 * `hosts [FILE [ZONES...]] { ... }`: reads FILE (default /etc/hosts) at startup and again every `reload`
 * period when its mtime or size changed, and answers from it and the Corefile's inline entries.
 */
export const setupHosts: Setup<HostsDeps> = (ctx) => {
  const stanza = onlyOnce(ctx, PLUGIN);
  const opts = parseHostsStanza(stanza, ctx.blockZones);
  const files = ctx.deps.hostsFiles ?? nodeHostsFiles;
  const log = ctx.deps.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  if (opts.pathGiven) {
    const problem = checkFile(files, opts.path);
    if (problem?.fatal) throw stanzaError(stanza, PLUGIN, problem.message);
    if (problem) log(`[WARNING] plugin/${PLUGIN}: ${problem.message}`);
  }
  const metrics = hostsMetrics(ctx.deps.metrics ?? new Metrics());
  const data = new HostsData(
    opts.path,
    { origins: opts.origins, autoReverse: opts.autoReverse },
    opts.inline,
    files,
    (entries, mtimeMs) => {
      metrics.entries.set({ hostsfile: opts.path }, entries);
      metrics.reloadTimestamp.set(mtimeMs / 1000);
    },
  );
  watch(ctx, opts, data, ctx.deps.timers ?? systemTimers);
  return { plugin: (next) => new HostsHandler(next, data, opts) };
};

/** Reads the file at startup, then on every period until shutdown (never with `reload 0`). */
function watch(ctx: Parameters<Setup>[0], opts: HostsOptions, data: HostsData, timers: Timers): void {
  let stop: () => void = () => {};
  ctx.lifecycle.onStartup(() => {
    data.reload();
    if (opts.reloadMs > 0) stop = periodically(timers, opts.reloadMs, () => data.reload());
  });
  ctx.lifecycle.onShutdown(() => stop());
}

/**
 * What CoreDNS says about a named FILE at setup: a missing file or a directory is only a warning (the
 * file may appear later); any other failure to look at it stops the Corefile from loading.
 */
function checkFile(files: HostsFiles, path: string): { message: string; fatal: boolean } | undefined {
  try {
    if (files.stat(path).isDirectory)
      return { message: `Hosts file ${JSON.stringify(path)} is a directory`, fatal: false };
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { message: `File does not exist: ${path}`, fatal: false };
    return {
      message: `unable to access hosts file '${path}': ${goStatError(path, err as Error)}`,
      fatal: true,
    };
  }
}

/** Go's *PathError text (`stat PATH: permission denied`) for the errors a stat commonly meets. */
const GO_ERRNO_TEXT: Record<string, string> = {
  EACCES: "permission denied",
  ENOTDIR: "not a directory",
  ENAMETOOLONG: "file name too long",
  ELOOP: "too many levels of symbolic links",
  EIO: "input/output error",
};

function goStatError(path: string, err: Error): string {
  const text = GO_ERRNO_TEXT[(err as NodeJS.ErrnoException).code ?? ""];
  return text ? `stat ${path}: ${text}` : err.message;
}
