import { masterFlagError } from "@switchyard/kube";
import { type FlagSpec, parseHostPort, VERSION_FLAG } from "@switchyard/kube/flags";
import {
  DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  DEFAULT_MAX_ENDPOINTS_PER_SUBSET,
  MAX_MAX_ENDPOINTS_PER_SLICE,
  MIN_MAX_ENDPOINTS_PER_SLICE,
} from "@switchyard/slice-controller";
import { UNSTORED_IGNORED_FLAGS } from "./ignored-flags.js";

export interface ControllerFlags {
  kubeconfig: string | undefined;
  /** --master: the API server's address, replacing the kubeconfig's server; "" when not given. */
  master: string;
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
  /** Only "leases" is valid while electing, as in kube-controller-manager. */
  leaseResourceLock: string;
  leaseName: string;
  leaseNamespace: string;
  /** --controllers entries as given; cli/controllers.ts reads which of our two they enable. */
  controllers: string[];
  /** Client-side rate limit per client, as client-go applies it (0: client-go's default; negative: none). */
  kubeApiQps: number;
  kubeApiBurst: number;
  /** Accepted and ignored (see cli/ignored-flags.ts). */
  kubeApiContentType: string;
  authenticationKubeconfig: string | undefined;
  authorizationKubeconfig: string | undefined;
  bindAddress: string;
  securePort: number;
  featureGates: Record<string, boolean>;
  /** host:port, or undefined when disabled with "0". */
  metricsBindAddress: string | undefined;
  /** host:port; undefined serves health on the metrics address. */
  healthzBindAddress: string | undefined;
  verbosity: number;
  /** --version as given ("true" when bare, or "raw"); absent when not. */
  version?: string;
  help: boolean;
  /** Names of the flags given on the command line, in order (for the ignored-flag log). */
  given: string[];
}

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
/** component-base's -v: strconv.ParseUint(value, 10, 31), so decimal digits up to int32's largest. */
const VERBOSITY = { min: 0, max: 2 ** 31 - 1, decimal: true };

function hostPortCheck(address: string): string | undefined {
  return parseHostPort(address) === undefined ? "want host:port" : undefined;
}

const IGNORED = "Accepted for kube-controller-manager compatibility; ignored (see README).";

export const spec: FlagSpec<ControllerFlags>[] = [
  {
    name: "kubeconfig",
    kind: "string",
    field: "kubeconfig",
    help: "Path to a kubeconfig; in-cluster config when unset.",
  },
  {
    name: "master",
    kind: "string",
    field: "master",
    help: "The API server's address (URL, or host:port for plain http), overriding the kubeconfig's server.",
    check: masterFlagError,
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
  {
    name: "controllers",
    kind: "list",
    field: "controllers",
    help: "kube-controller-manager's list: '*', 'endpointslice-controller', '-endpointslice-mirroring-controller', ... picks which of the two run.",
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
  {
    name: "leader-elect-resource-lock",
    kind: "string",
    field: "leaseResourceLock",
    help: 'Lock type; only "leases".',
  },
  { name: "leader-elect-resource-name", kind: "string", field: "leaseName", help: "Name of the Lease." },
  {
    name: "leader-elect-resource-namespace",
    kind: "string",
    field: "leaseNamespace",
    help: "Namespace of the Lease.",
  },
  {
    name: "kube-api-qps",
    kind: "float",
    field: "kubeApiQps",
    help: "Requests per second per client (informers, each controller, leader election); negative: unlimited.",
  },
  {
    name: "kube-api-burst",
    kind: INT32,
    field: "kubeApiBurst",
    help: "Burst of requests per client above --kube-api-qps.",
  },
  { name: "kube-api-content-type", kind: "string", field: "kubeApiContentType", help: IGNORED },
  { name: "authentication-kubeconfig", kind: "string", field: "authenticationKubeconfig", help: IGNORED },
  { name: "authorization-kubeconfig", kind: "string", field: "authorizationKubeconfig", help: IGNORED },
  { name: "bind-address", kind: "ip", field: "bindAddress", help: IGNORED },
  { name: "secure-port", kind: { min: 0, max: 65535 }, field: "securePort", help: IGNORED },
  { name: "feature-gates", kind: "bool-map", field: "featureGates", help: IGNORED },
  {
    name: "metrics-bind-address",
    kind: "string",
    field: "metricsBindAddress",
    help: 'host:port for /metrics (and health unless --healthz-bind-address); "0" disables.',
    check: (address) => (address === "0" ? undefined : hostPortCheck(address)),
  },
  {
    name: "healthz-bind-address",
    kind: "string",
    field: "healthzBindAddress",
    help: "host:port for /healthz, /livez and /readyz on their own listener.",
    check: hostPortCheck,
  },
  { name: "v", kind: VERBOSITY, field: "verbosity", help: "Log verbosity; 0 is quiet." },
  ...UNSTORED_IGNORED_FLAGS,
  VERSION_FLAG,
  { name: "help", kind: "bool", shorthand: "h", field: "help", help: "Print this help." },
];

/** kube-controller-manager's defaults, except the Lease's name (ours, so both can run side by side). */
export const DEFAULT_FLAGS: ControllerFlags = {
  kubeconfig: undefined,
  master: "",
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
  leaseResourceLock: "leases",
  leaseName: "switchyard-slice-controller",
  leaseNamespace: "kube-system",
  controllers: ["*"],
  kubeApiQps: 20,
  kubeApiBurst: 30,
  kubeApiContentType: "application/vnd.kubernetes.protobuf",
  authenticationKubeconfig: undefined,
  authorizationKubeconfig: undefined,
  bindAddress: "0.0.0.0",
  securePort: 10257,
  featureGates: {},
  metricsBindAddress: "127.0.0.1:10258",
  healthzBindAddress: undefined,
  verbosity: 0,
  help: false,
  given: [],
};
