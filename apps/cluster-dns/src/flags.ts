import {
  type CustomKind,
  FlagError,
  type FlagSet,
  parseFlags as parseFlagSet,
  usage,
} from "@switchyard/kube/flags";
import { hostAutoWorkers, MAX_WORKERS } from "./worker-count.js";

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

export { FlagError } from "@switchyard/kube/flags";

/** CoreDNS declares its port as a string flag; help names the type as it does. */
const PORT: CustomKind = {
  type: "string",
  read: (raw) => (/^\d{1,5}$/.test(raw) && Number(raw) <= 65535 ? Number(raw) : undefined),
  invalid: "not a port",
};

type ParsedFields = Omit<Flags, "extraArgs" | "workers"> & { workers?: number };

/**
 * The environment variable that sets `-workers`'s default: the image sets it to `auto`, so a Deployment that
 * passes only `-conf` (kubeadm's) uses the cores its pod may.
 */
export const WORKERS_ENV = "SWITCHYARD_DNS_WORKERS";

/** CoreDNS 1.14's flags (and -workers), with its help texts; `auto` counts what `-workers auto` means. */
function flagSet(auto: () => number): FlagSet<ParsedFields> {
  const workers: CustomKind = {
    type: "string",
    read: (raw) => {
      const n = raw === "auto" ? auto() : /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
      return n >= 1 && n <= MAX_WORKERS ? n : undefined;
    },
    invalid: `not "auto" or 1-${MAX_WORKERS}`,
  };
  return {
    dialect: "go",
    plainBools: true,
    // -workers has no default here: parseFlags tells one given from $SWITCHYARD_DNS_WORKERS and from none.
    defaults: { dnsPort: 53, version: false, plugins: false, quiet: false },
    flags: [
      { name: "conf", kind: "string", field: "conf", help: 'Corefile to load (default "Corefile")' },
      { name: "dns.port", kind: PORT, field: "dnsPort", help: 'Default port (default "53")' },
      // CoreDNS registers -p as a second name of the same variable.
      { name: "p", kind: PORT, field: "dnsPort", help: 'Default port (default "53")' },
      { name: "version", kind: "bool", field: "version", help: "Show version" },
      { name: "plugins", kind: "bool", field: "plugins", help: "List installed plugins" },
      { name: "quiet", kind: "bool", field: "quiet", help: "Quiet mode (no initialization output)" },
      { name: "pidfile", kind: "string", field: "pidfile", help: "Path to write pid file" },
      {
        name: "workers",
        kind: workers,
        field: "workers",
        help: 'Processes serving DNS, or "auto": one per core the CPU and memory limits allow (default "1", or $SWITCHYARD_DNS_WORKERS)',
      },
    ],
  };
}

/**
 * Parses flags the way Go's flag package does: `-name value`, `-name=value`, one or two dashes, bare
 * booleans or `-name=false`; `--` or the first argument that is not a flag ends the flags, and the rest are
 * extraArgs. A bad flag is a FlagError naming the culprit.
 */
export function parseFlags(
  argv: readonly string[],
  auto: () => number = hostAutoWorkers,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Flags {
  const set = flagSet(auto);
  const { values, rest } = parseFlagSet(set, argv);
  // Each worker of -workers reads the Corefile itself, and a pipe can be read only once: the variable's
  // default yields to `-conf stdin`, a -workers flag does not.
  if (values.conf === "stdin" && (values.workers ?? 1) > 1)
    throw new FlagError("-conf stdin takes -workers 1 (each worker reads the Corefile itself)");
  const workers = values.workers ?? (values.conf === "stdin" ? 1 : (workersFromEnv(set, env) ?? 1));
  return { ...values, workers, extraArgs: [...rest] };
}

/** `-workers` as `$SWITCHYARD_DNS_WORKERS` sets it, when it does. */
function workersFromEnv(
  set: FlagSet<ParsedFields>,
  env: Readonly<Record<string, string | undefined>>,
): number | undefined {
  const value = env[WORKERS_ENV];
  if (value === undefined || value === "") return undefined;
  try {
    return parseFlagSet(set, [`-workers=${value}`]).values.workers;
  } catch {
    throw new FlagError(
      `invalid value ${JSON.stringify(value)} for ${WORKERS_ENV}: not "auto" or 1-${MAX_WORKERS}`,
    );
  }
}

export const USAGE = usage(
  flagSet(() => 1),
  "switchyard-dns",
);
