import { isIP } from "node:net";
import { parseGoDuration } from "@switchyard/kube";
import { enabledControllers } from "./controllers.js";
import { type ControllerFlags, DEFAULT_FLAGS, type FlagSpec, spec } from "./flag-spec.js";
import { parseGoBool, parseGoBoolMap, parseGoFloat, parseGoInt } from "./go-values.js";

export { type ControllerFlags, DEFAULT_FLAGS } from "./flag-spec.js";

/** A bad command line; main prints the message on one line and exits 2. */
export class FlagError extends Error {
  override name = "FlagError";
}

type Value = string | number | boolean | undefined | string[] | Record<string, boolean>;

function convert(flag: FlagSpec, raw: string): Value {
  const bad = (why: string) => new FlagError(`invalid value "${raw}" for flag --${flag.name}: ${why}`);
  const { kind } = flag;
  switch (kind) {
    case "string":
      if (flag.field === "metricsBindAddress" && raw === "0") return undefined;
      if (flag.field.endsWith("BindAddress") && parseHostPort(raw) === undefined) throw bad("want host:port");
      return raw;
    case "bool": {
      const value = parseGoBool(raw);
      if (value === undefined) throw bad("want true or false");
      return value;
    }
    case "duration": {
      // Go's flag library takes negative durations too; what they mean is settled after parsing.
      const ms = parseGoDuration(raw);
      if (ms === undefined) throw bad("want a duration such as 500ms or 1s");
      return ms;
    }
    case "float": {
      const value = parseGoFloat(raw);
      if (value === undefined) throw bad("want a number");
      return value;
    }
    case "ip":
      if (isIP(raw) === 0) throw bad("want an IP address");
      return raw;
    case "list":
      return raw === "" ? [] : raw.split(",").map((s) => s.trim());
    case "bool-map": {
      const map = parseGoBoolMap(raw);
      if (typeof map === "string") throw bad(map);
      return map;
    }
  }
  const n = parseGoInt(raw);
  if (n === undefined || n < kind.min || n > kind.max) {
    throw bad(`must be an integer from ${kind.min} to ${kind.max}`);
  }
  return n;
}

/** Parses kube-controller-manager-style flags: --name=value, --name value, bare booleans, -v=2. */
export function parseFlags(argv: readonly string[]): ControllerFlags {
  const flags: Record<string, unknown> = { ...DEFAULT_FLAGS, given: [] };
  const given: string[] = [];
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
    given.push(name);
  }
  const parsed = { ...(flags as unknown as ControllerFlags), given };
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

// client-go accepts a negative burst with a positive QPS and then fails every request; refused up front here.
function checkClient(f: ControllerFlags): void {
  const limited = f.kubeApiQps >= 0;
  if (limited && f.kubeApiBurst < 0) {
    throw new FlagError(
      `invalid value "${f.kubeApiBurst}" for flag --kube-api-burst: must not be negative while --kube-api-qps is not`,
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
    const value =
      typeof f.kind === "object"
        ? " int"
        : f.kind === "bool"
          ? ""
          : f.kind === "bool-map"
            ? " key=bool,..."
            : ` ${f.kind}`;
    return `  --${f.name}${value}\n      ${f.help}`;
  });
  return `Usage: ${program} [flags]\n\n${lines.join("\n")}\n`;
}
