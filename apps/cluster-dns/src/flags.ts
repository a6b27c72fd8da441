import { availableParallelism } from "node:os";
import {
  type CustomKind,
  FlagError,
  type FlagSet,
  parseFlags as parseFlagSet,
  usage,
} from "@switchyard/kube/flags";

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

/** The most worker processes `-workers` takes; more than the cores only costs memory. */
const MAX_WORKERS = 64;

/** CoreDNS declares its port as a string flag; help names the type as it does. */
const PORT: CustomKind = {
  type: "string",
  read: (raw) => (/^\d{1,5}$/.test(raw) && Number(raw) <= 65535 ? Number(raw) : undefined),
  invalid: "not a port",
};

type ParsedFields = Omit<Flags, "extraArgs">;

/** CoreDNS 1.14's flags (and -workers), with its help texts; `cores` is what `-workers auto` means. */
function flagSet(cores: number): FlagSet<ParsedFields> {
  const workers: CustomKind = {
    type: "string",
    read: (raw) => {
      const n = raw === "auto" ? cores : /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
      return n >= 1 && n <= MAX_WORKERS ? n : undefined;
    },
    invalid: `not "auto" or 1-${MAX_WORKERS}`,
  };
  return {
    dialect: "go",
    plainBools: true,
    defaults: { dnsPort: 53, version: false, plugins: false, quiet: false, workers: 1 },
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
        help: 'Processes serving DNS, or "auto" for one per core (default "1")',
      },
    ],
  };
}

/**
 * Parses flags the way Go's flag package does: `-name value`, `-name=value`, one or two dashes, bare
 * booleans or `-name=false`; `--` or the first argument that is not a flag ends the flags, and the rest are
 * extraArgs. A bad flag is a FlagError naming the culprit.
 */
export function parseFlags(argv: readonly string[], cores = availableParallelism()): Flags {
  const { values, rest } = parseFlagSet(flagSet(cores), argv);
  const flags: Flags = { ...values, extraArgs: [...rest] };
  // Each worker of -workers reads the Corefile itself, and a pipe can be read only once.
  if (flags.conf === "stdin" && flags.workers > 1)
    throw new FlagError("-conf stdin takes -workers 1 (each worker reads the Corefile itself)");
  return flags;
}

export const USAGE = usage(flagSet(1), "switchyard-dns");
