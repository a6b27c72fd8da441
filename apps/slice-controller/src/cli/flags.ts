import { parseGoDuration } from "@switchyard/kube";
import {
  DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  DEFAULT_MAX_ENDPOINTS_PER_SUBSET,
  MAX_MAX_ENDPOINTS_PER_SLICE,
  MIN_MAX_ENDPOINTS_PER_SLICE,
} from "@switchyard/slice-controller";

export interface ControllerFlags {
  kubeconfig: string | undefined;
  concurrentServiceEndpointSyncs: number;
  maxEndpointsPerSlice: number;
  endpointUpdatesBatchPeriodMs: number;
  mirroringConcurrentServiceEndpointSyncs: number;
  mirroringMaxEndpointsPerSubset: number;
  mirroringEndpointUpdatesBatchPeriodMs: number;
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  leaseName: string;
  leaseNamespace: string;
  /** host:port, or undefined when disabled with "0". */
  metricsBindAddress: string | undefined;
  /** host:port; undefined serves health on the metrics address. */
  healthzBindAddress: string | undefined;
  verbosity: number;
  help: boolean;
}

/** A bad command line; main prints the message on one line and exits 2. */
export class FlagError extends Error {
  override name = "FlagError";
}

type Kind = "string" | "bool" | "duration" | { min: number; max: number };

interface FlagSpec {
  name: string;
  kind: Kind;
  field: keyof ControllerFlags;
  help: string;
}

const spec: FlagSpec[] = [
  {
    name: "kubeconfig",
    kind: "string",
    field: "kubeconfig",
    help: "Path to a kubeconfig; in-cluster config when unset.",
  },
  {
    name: "concurrent-service-endpoint-syncs",
    kind: { min: 1, max: 50 },
    field: "concurrentServiceEndpointSyncs",
    help: "Services synced at once (1..50).",
  },
  {
    name: "max-endpoints-per-slice",
    kind: { min: MIN_MAX_ENDPOINTS_PER_SLICE, max: MAX_MAX_ENDPOINTS_PER_SLICE },
    field: "maxEndpointsPerSlice",
    help: "Endpoints per EndpointSlice (1..1000).",
  },
  {
    name: "endpointslice-updates-batch-period",
    kind: "duration",
    field: "endpointUpdatesBatchPeriodMs",
    help: "Delay added to syncs caused by Pod changes, to batch them (Go duration).",
  },
  {
    name: "mirroring-concurrent-service-endpoint-syncs",
    kind: { min: 1, max: 50 },
    field: "mirroringConcurrentServiceEndpointSyncs",
    help: "Endpoints objects mirrored at once (1..50).",
  },
  {
    name: "mirroring-max-endpoints-per-subset",
    kind: { min: 1, max: 1000 },
    field: "mirroringMaxEndpointsPerSubset",
    help: "Addresses mirrored per Endpoints subset (1..1000).",
  },
  {
    name: "mirroring-endpointslice-updates-batch-period",
    kind: "duration",
    field: "mirroringEndpointUpdatesBatchPeriodMs",
    help: "Delay added to mirroring syncs caused by Endpoints changes (Go duration).",
  },
  { name: "leader-elect", kind: "bool", field: "leaderElect", help: "Run only while holding the Lease." },
  {
    name: "leader-elect-lease-duration",
    kind: "duration",
    field: "leaseDurationMs",
    help: "How long a candidate waits after the last renewal before taking over.",
  },
  {
    name: "leader-elect-renew-deadline",
    kind: "duration",
    field: "renewDeadlineMs",
    help: "How long the leader retries renewing before stepping down.",
  },
  {
    name: "leader-elect-retry-period",
    kind: "duration",
    field: "retryPeriodMs",
    help: "Wait between acquire or renew attempts.",
  },
  { name: "leader-elect-resource-name", kind: "string", field: "leaseName", help: "Name of the Lease." },
  {
    name: "leader-elect-resource-namespace",
    kind: "string",
    field: "leaseNamespace",
    help: "Namespace of the Lease.",
  },
  {
    name: "metrics-bind-address",
    kind: "string",
    field: "metricsBindAddress",
    help: 'host:port for /metrics (and health unless --healthz-bind-address); "0" disables.',
  },
  {
    name: "healthz-bind-address",
    kind: "string",
    field: "healthzBindAddress",
    help: "host:port for /healthz, /livez and /readyz on their own listener.",
  },
  { name: "v", kind: { min: 0, max: 10 }, field: "verbosity", help: "Log verbosity; 0 is quiet." },
  { name: "help", kind: "bool", field: "help", help: "Print this help." },
];

export const DEFAULT_FLAGS: ControllerFlags = {
  kubeconfig: undefined,
  concurrentServiceEndpointSyncs: 5,
  maxEndpointsPerSlice: DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  endpointUpdatesBatchPeriodMs: 0,
  mirroringConcurrentServiceEndpointSyncs: 5,
  mirroringMaxEndpointsPerSubset: DEFAULT_MAX_ENDPOINTS_PER_SUBSET,
  mirroringEndpointUpdatesBatchPeriodMs: 0,
  leaderElect: true,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  leaseName: "switchyard-slice-controller",
  leaseNamespace: "kube-system",
  metricsBindAddress: "127.0.0.1:10258",
  healthzBindAddress: undefined,
  verbosity: 0,
  help: false,
};

function convert(flag: FlagSpec, raw: string): string | number | boolean | undefined {
  const bad = (why: string) => new FlagError(`invalid value "${raw}" for flag --${flag.name}: ${why}`);
  const { kind } = flag;
  if (kind === "string") {
    if (flag.field === "metricsBindAddress" && raw === "0") return undefined;
    if (flag.field.endsWith("BindAddress") && parseHostPort(raw) === undefined) throw bad("want host:port");
    return raw;
  }
  if (kind === "bool") {
    if (raw === "true" || raw === "1") return true;
    if (raw === "false" || raw === "0") return false;
    throw bad("want true or false");
  }
  if (kind === "duration") {
    const ms = parseGoDuration(raw);
    if (ms === undefined || ms < 0) throw bad("want a non-negative duration such as 500ms or 1s");
    return ms;
  }
  const n = Number(raw);
  if (!/^-?\d+$/.test(raw) || n < kind.min || n > kind.max) {
    throw bad(`must be an integer from ${kind.min} to ${kind.max}`);
  }
  return n;
}

/** Parses kube-controller-manager-style flags: --name=value, --name value, bare booleans, -v=2. */
export function parseFlags(argv: readonly string[]): ControllerFlags {
  const flags: Record<string, unknown> = { ...DEFAULT_FLAGS };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const m = /^--?([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(arg);
    if (m === null) throw new FlagError(`unexpected argument "${arg}": this command takes flags only`);
    const name = m[1] ?? "";
    const flag = spec.find((f) => f.name === name);
    if (flag === undefined) throw new FlagError(`unknown flag: ${arg.split("=")[0]}`);
    let raw = m[2];
    if (raw === undefined) {
      if (flag.kind === "bool") raw = "true";
      else {
        raw = argv[++i];
        if (raw === undefined) throw new FlagError(`flag needs an argument: --${name}`);
      }
    }
    flags[flag.field] = convert(flag, raw);
  }
  const parsed = flags as unknown as ControllerFlags;
  checkLeaderElection(parsed);
  return parsed;
}

// The elector's own invariants, reported against the flags that break them.
function checkLeaderElection(f: ControllerFlags): void {
  if (!f.leaderElect) return;
  if (f.leaseDurationMs <= f.renewDeadlineMs) {
    throw new FlagError("--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline");
  }
  if (f.renewDeadlineMs <= 1.2 * f.retryPeriodMs) {
    throw new FlagError(
      "--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period",
    );
  }
}

/** Splits "host:port" ("[::1]:10258" for IPv6); undefined when malformed. */
export function parseHostPort(address: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address);
  const port = Number(m?.[3]);
  if (m === null || port > 65535) return undefined;
  return { host: m[1] ?? m[2] ?? "", port };
}

export function usage(program: string): string {
  const lines = spec.map((f) => {
    const value = typeof f.kind === "object" ? " int" : f.kind === "bool" ? "" : ` ${f.kind}`;
    return `  --${f.name}${value}\n      ${f.help}`;
  });
  return `Usage: ${program} [flags]\n\n${lines.join("\n")}\n`;
}
