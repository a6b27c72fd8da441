import {
  FlagError,
  type FlagSet,
  usage as flagUsage,
  parseFlags as parseFlagSet,
} from "@switchyard/kube/flags";
import { enabledControllers } from "./controllers.js";
import { type ControllerFlags, DEFAULT_FLAGS, spec } from "./flag-spec.js";

export { FlagError, parseHostPort } from "@switchyard/kube/flags";
export { type ControllerFlags, DEFAULT_FLAGS } from "./flag-spec.js";

const FLAG_SET: FlagSet<ControllerFlags> = { dialect: "pflag", flags: spec, defaults: DEFAULT_FLAGS };

/** Parses kube-controller-manager-style flags: --name=value, --name value, bare booleans, -v=2. */
export function parseFlags(argv: readonly string[]): ControllerFlags {
  const { values, given } = parseFlagSet(FLAG_SET, argv);
  const parsed = { ...values, given: [...given] };
  if (parsed.metricsBindAddress === "0") parsed.metricsBindAddress = undefined;
  checkLeaderElection(parsed);
  checkClient(parsed);
  if (!Object.values(enabledControllers(parsed.controllers)).some(Boolean)) {
    throw new FlagError(
      `invalid value "${parsed.controllers.join(",")}" for flag --controllers: enables neither endpointslice-controller nor endpointslice-mirroring-controller`,
    );
  }
  // A batch period at or below zero delays nothing, as a Go work queue's AddAfter treats it.
  parsed.endpointUpdatesBatchPeriodMs = Math.max(0, parsed.endpointUpdatesBatchPeriodMs);
  parsed.mirroringEndpointUpdatesBatchPeriodMs = Math.max(0, parsed.mirroringEndpointUpdatesBatchPeriodMs);
  return parsed;
}

// kube-controller-manager's resource-lock check and client-go's elector invariants, both only while electing,
// reported against the flags that break them.
function checkLeaderElection(f: ControllerFlags): void {
  if (!f.leaderElect) return;
  if (f.leaseResourceLock !== "leases") {
    throw new FlagError(
      `invalid value "${f.leaseResourceLock}" for flag --leader-elect-resource-lock: must be "leases"`,
    );
  }
  const positive: [string, number][] = [
    ["leader-elect-lease-duration", f.leaseDurationMs],
    ["leader-elect-renew-deadline", f.renewDeadlineMs],
    ["leader-elect-retry-period", f.retryPeriodMs],
  ];
  for (const [name, ms] of positive) {
    if (ms <= 0) throw new FlagError(`--${name} must be greater than zero while --leader-elect is on`);
  }
  if (f.leaseDurationMs <= f.renewDeadlineMs) {
    throw new FlagError("--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline");
  }
  if (f.renewDeadlineMs <= 1.2 * f.retryPeriodMs) {
    throw new FlagError(
      "--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period",
    );
  }
}

// client-go's NewForConfigAndClient refuses a burst of 0 or less under a positive QPS, so kcm exits at start. With
// QPS 0 (client-go's default 5) a negative burst makes every request fail there; refused up front here.
function checkClient(f: ControllerFlags): void {
  if (f.kubeApiQps > 0 && f.kubeApiBurst <= 0) {
    throw new FlagError(
      `invalid value "${f.kubeApiBurst}" for flag --kube-api-burst: burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0`,
    );
  }
  if (f.kubeApiQps === 0 && f.kubeApiBurst < 0) {
    throw new FlagError(
      `invalid value "${f.kubeApiBurst}" for flag --kube-api-burst: must not be negative while --kube-api-qps is not`,
    );
  }
}

export function usage(program: string): string {
  return flagUsage(FLAG_SET, program);
}
