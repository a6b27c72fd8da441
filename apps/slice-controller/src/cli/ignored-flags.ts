/**
 * kube-controller-manager flags this program accepts, so a Deployment written for kube-controller-manager starts
 * unchanged, but that have nothing to act on here. Their values are still checked as kube-controller-manager
 * checks them. main logs each one given once at startup, with the reason.
 */
export const IGNORED_FLAGS: Readonly<Record<string, string>> = {
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

/** One note per ignored flag in `given`, in the order given. */
export function ignoredFlagNotes(given: readonly string[]): { flag: string; reason: string }[] {
  return [...new Set(given)]
    .filter((name) => IGNORED_FLAGS[name] !== undefined)
    .map((name) => ({ flag: `--${name}`, reason: IGNORED_FLAGS[name] ?? "" }));
}
