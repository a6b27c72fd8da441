import { availableParallelism } from "node:os";

/** The command line CoreDNS 1.14 has, as far as a cluster DNS server needs it. */
export interface Flags {
  /** -conf: a file, or `stdin`; absent, ./Corefile or CoreDNS's built-in default (corefile-source.ts). */
  conf?: string;
  /** The port of server blocks that name none. */
  dnsPort: number;
  version: boolean;
  plugins: boolean;
  quiet: boolean;
  pidfile?: string;
  /** Processes serving DNS (switchyard-dns only; CoreDNS has one process with many threads). */
  workers: number;
  /** What follows the flags (Go's flag.Args()); CoreDNS refuses any. */
  extraArgs: string[];
}

export class FlagError extends Error {
  override name = "FlagError";
}

type Kind = "string" | "port" | "bool" | "workers";

const SPEC: Record<string, { kind: Kind; key: keyof Flags }> = {
  conf: { kind: "string", key: "conf" },
  "dns.port": { kind: "port", key: "dnsPort" },
  // CoreDNS registers -p as a second name of the same variable.
  p: { kind: "port", key: "dnsPort" },
  version: { kind: "bool", key: "version" },
  plugins: { kind: "bool", key: "plugins" },
  quiet: { kind: "bool", key: "quiet" },
  pidfile: { kind: "string", key: "pidfile" },
  workers: { kind: "workers", key: "workers" },
};

/** The most worker processes `-workers` takes; more than the cores only costs memory. */
const MAX_WORKERS = 64;

/**
 * Parses flags the way Go's flag package does: `-name value`, `-name=value`, one or two dashes, bare
 * booleans or `-name=false`; `--` or the first argument that is not a flag ends the flags, and the rest are
 * extraArgs. A bad flag is a FlagError naming the culprit.
 */
export function parseFlags(argv: readonly string[], cores = availableParallelism()): Flags {
  const flags: Flags = {
    dnsPort: 53,
    version: false,
    plugins: false,
    quiet: false,
    workers: 1,
    extraArgs: [],
  };
  const set = flags as unknown as Record<string, unknown>;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      flags.extraArgs = argv.slice(i + 1);
      break;
    }
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(arg);
    if (!m?.[1] || arg === "-") {
      flags.extraArgs = argv.slice(i);
      break;
    }
    const name = m[1];
    const spec = SPEC[name];
    if (!spec) throw new FlagError(`flag provided but not defined: -${name}`);
    let value = m[2];
    if (spec.kind === "bool") {
      if (value !== undefined && !/^(true|false|1|0)$/.test(value))
        throw new FlagError(`invalid boolean value "${value}" for -${name}`);
      set[spec.key] = value === undefined || value === "true" || value === "1";
      continue;
    }
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new FlagError(`flag needs an argument: -${name}`);
    }
    if (spec.kind === "workers") {
      const n = value === "auto" ? cores : /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
      if (!(n >= 1 && n <= MAX_WORKERS))
        throw new FlagError(`invalid value "${value}" for flag -${name}: not "auto" or 1-${MAX_WORKERS}`);
      set[spec.key] = n;
    } else if (spec.kind === "port") {
      const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
      if (!(port >= 0 && port <= 65535))
        throw new FlagError(`invalid value "${value}" for flag -${name}: not a port`);
      set[spec.key] = port;
    } else {
      set[spec.key] = value;
    }
  }
  // Each worker of -workers reads the Corefile itself, and a pipe can be read only once.
  if (flags.conf === "stdin" && flags.workers > 1)
    throw new FlagError("-conf stdin takes -workers 1 (each worker reads the Corefile itself)");
  return flags;
}

export const USAGE = `Usage of switchyard-dns:
  -conf string
    \tCorefile to load (default "Corefile")
  -dns.port string
    \tDefault port (default "53")
  -p string
    \tDefault port (default "53")
  -pidfile string
    \tPath to write pid file
  -plugins
    \tList installed plugins
  -quiet
    \tQuiet mode (no initialization output)
  -version
    \tShow version
  -workers string
    \tProcesses serving DNS, or "auto" for one per core (default "1")
`;
