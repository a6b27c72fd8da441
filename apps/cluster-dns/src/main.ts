import { fstatSync, readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { answerCollects, Metrics, Resolver, scrapeThroughPrimary } from "@switchyard/resolver";
import { type CorefileSource, corefileSource } from "./corefile-source.js";
import { FlagError, parseFlags, USAGE } from "./flags.js";
import { writePidfile } from "./pidfile.js";
import { pluginsText } from "./plugins-list.js";
import { versionLines } from "./version.js";

/** Where the command writes; process streams unless a test swaps them. */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Standard input's text for `-conf stdin`, undefined when it is a terminal; absent: nothing piped. */
  stdin?: () => string | undefined;
}

export const processIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  cwd: process.cwd(),
  env: process.env,
  stdin: () => (fstatSync(0).isCharacterDevice() ? undefined : readFileSync(0, "utf8")),
};

/** A running server and how to end it; returned so that the caller (bin or test) owns the process. */
export interface Running {
  resolver: Resolver;
  /** Lameduck shutdown: /ready goes first, DNS keeps answering for health's lameduck, then all stops. */
  shutdown(signal: string): Promise<void>;
  /** Rereads the Corefile and swaps it in; a bad one is logged and the running one kept. */
  reload(): Promise<void>;
}

/**
 * `switchyard-dns [-conf FILE] [-dns.port N] [-pidfile FILE] [-quiet] [-version] [-plugins]`.
 * Returns an exit code for commands that end at once, or the running server.
 */
/** Set in a worker process of `-workers N`: its number, and how it reaches the primary. */
export interface WorkerRole {
  /** 1-based; worker 1 prints the banner, the primary writes the pidfile. */
  index: number;
}

export async function main(
  argv: readonly string[],
  io: Io = processIo,
  worker?: WorkerRole,
): Promise<number | Running> {
  if (argv.some((a) => /^--?(help|h)$/.test(a))) {
    io.out(USAGE);
    return 0;
  }
  let flags: ReturnType<typeof parseFlags>;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    io.err(`switchyard-dns: ${err.message} (see -help)`);
    return 2;
  }
  if (flags.extraArgs.length > 0) {
    io.err(`switchyard-dns: extra command line arguments: [${flags.extraArgs.join(" ")}]`);
    return 1;
  }
  if (flags.version) {
    for (const line of versionLines()) io.out(line);
    return 0;
  }
  if (flags.plugins) {
    io.out(pluginsText());
    return 0;
  }
  const readFile = (path: string) => readFileSync(resolve(io.cwd, path), "utf8");
  let source: CorefileSource;
  try {
    const stdin = io.stdin ?? (() => undefined);
    source = corefileSource(flags.conf, flags.dnsPort, { cwd: io.cwd, readFile, stdin });
  } catch (err) {
    io.err(`switchyard-dns: ${oneLine(err)}`);
    return 1;
  }
  const { text, file } = source;
  // Piped and built-in Corefiles never change: rereading gives the same text (CoreDNS keeps its input too).
  const reread = source.rereadable ? () => readFile(file) : () => text;
  let resolver: Resolver;
  try {
    resolver = Resolver.fromCorefile(text, {
      file,
      readFile: (path) => (path === file ? reread() : readFile(path)),
      env: io.env,
      defaultPort: flags.dnsPort,
      deps: { log: io.out, errorLog: io.out, ...(worker ? { scrape: scrapeThroughPrimary() } : {}) },
    });
    if (worker) answerCollects(resolver.config.deps.metrics ?? new Metrics());
    await resolver.start();
  } catch (err) {
    io.err(`switchyard-dns: ${oneLine(err)}`);
    return 1;
  }
  if (flags.pidfile && !worker) writePidfile(flags.pidfile, io.out);
  if (!flags.quiet && (worker?.index ?? 1) === 1) {
    // CoreDNS names the address of a bound listener: `.:53 on 127.0.0.2`.
    for (const e of resolver.config.enabled)
      for (const host of e.hosts ?? [undefined]) io.out(`${e.zone}:${e.port}${host ? ` on ${host}` : ""}`);
    for (const line of versionLines()) io.out(line);
  }
  let stopping: Promise<void> | undefined;
  return {
    resolver,
    shutdown(signal) {
      stopping ??= (async () => {
        io.out(`[INFO] ${signal}: Shutting down servers then terminating`);
        await resolver.stop();
        if (flags.pidfile && !worker) rmSync(flags.pidfile, { force: true });
      })();
      return stopping;
    },
    async reload() {
      try {
        await resolver.reload(reread());
        io.out("[INFO] Reloading complete");
      } catch (err) {
        io.out(`[ERROR] Restart failed: ${oneLine(err)}`);
      }
    },
  };
}

function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s*\n\s*/g, " ");
}
