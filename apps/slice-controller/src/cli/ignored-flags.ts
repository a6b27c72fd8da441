import type { FlagSpec, UnstoredFlag } from "@switchyard/kube/flags";
import type { ControllerFlags } from "./flag-spec.js";

// kube-controller-manager flags this program accepts, so a Deployment written for kube-controller-manager starts
// unchanged, but that have nothing to act on here. Their values are still checked as kube-controller-manager checks
// them. main logs each one given once at startup, with the reason.

/** Ignored flags whose values are kept in ControllerFlags (flag-spec.ts declares them), with why. */
const STORED: Readonly<Record<string, string>> = {
  "authentication-kubeconfig":
    "there is no secure serving port whose callers need authenticating; /metrics and health are plain HTTP on --metrics-bind-address and --healthz-bind-address",
  "authorization-kubeconfig":
    "there is no secure serving port whose callers need authorizing; /metrics and health are plain HTTP on --metrics-bind-address and --healthz-bind-address",
  "bind-address": "there is no secure serving port; use --metrics-bind-address and --healthz-bind-address",
  "secure-port": "there is no secure serving port; use --metrics-bind-address and --healthz-bind-address",
  "feature-gates":
    "the behaviour is fixed at kube-controller-manager v1.37.2's default gates; no gate is read at run time",
  "kube-api-content-type": "requests and responses are always application/json; protobuf is not spoken",
};

type Read = "string" | "bool" | "duration" | "log-format";

const NO_SECURE_PORT = "there is no secure serving port";

/**
 * kube-controller-manager's generic flags a kcm-style Deployment (kubeadm's static Pod, cut down with
 * --controllers) also passes, with nothing stored: name, how upstream reads the value, why nothing happens here.
 * Read as kube-controller-manager reads them (pflag's bools and durations; --logging-format only names a format
 * it has), so a value it refuses is refused here too.
 */
const UNSTORED: readonly [string, Read, string][] = [
  [
    "use-service-account-credentials",
    "bool",
    "both controllers act with this program's credentials (its ServiceAccount holds both roles); there is no per-controller token",
  ],
  ["client-ca-file", "string", `${NO_SECURE_PORT} whose clients present certificates`],
  ["requestheader-client-ca-file", "string", `${NO_SECURE_PORT} behind an authenticating proxy`],
  ["tls-cert-file", "string", `${NO_SECURE_PORT} to serve this certificate on`],
  ["tls-private-key-file", "string", `${NO_SECURE_PORT} to serve this key on`],
  ["cert-dir", "string", `${NO_SECURE_PORT} needing a self-signed certificate`],
  ["profiling", "bool", "there is no pprof handler"],
  ["contention-profiling", "bool", "there is no pprof handler"],
  ["min-resync-period", "duration", "informers do not resync on a timer; every change comes from the watch"],
  ["controller-start-interval", "duration", "the two controllers start together once the caches have synced"],
  ["logging-format", "log-format", "logs are always JSON lines"],
  ["vmodule", "string", "verbosity is global (--v)"],
  ["log-flush-frequency", "duration", "every log line is written at once"],
];

const READ: Record<Read, Pick<UnstoredFlag, "kind" | "check">> = {
  string: { kind: "string" },
  bool: { kind: "bool" },
  duration: { kind: "duration" },
  // component-base's log registry: text and, as kube-controller-manager registers it, json.
  "log-format": {
    kind: "string",
    check: (format: string) => (["text", "json"].includes(format) ? undefined : 'want "text" or "json"'),
  },
};

export const UNSTORED_IGNORED_FLAGS: readonly FlagSpec<ControllerFlags>[] = UNSTORED.map(
  ([name, read]): UnstoredFlag => ({
    name,
    ...READ[read],
    help: "Accepted for kube-controller-manager compatibility; ignored (see README).",
  }),
);

/** Every ignored flag, with why nothing happens. */
export const IGNORED_FLAGS: Readonly<Record<string, string>> = {
  ...STORED,
  ...Object.fromEntries(UNSTORED.map(([name, , why]) => [name, why])),
};

/** One note per ignored flag in `given`, in the order given. */
export function ignoredFlagNotes(given: readonly string[]): { flag: string; reason: string }[] {
  return [...new Set(given)]
    .filter((name) => IGNORED_FLAGS[name] !== undefined)
    .map((name) => ({ flag: `--${name}`, reason: IGNORED_FLAGS[name] ?? "" }));
}
