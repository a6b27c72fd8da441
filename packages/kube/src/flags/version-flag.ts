import { parseGoBool } from "./go-values.js";

/**
 * `--version` as component-base's verflag reads it (kube-proxy and kube-controller-manager): a bool, given bare
 * as true, or "raw" for the details. Declare it as a string flag with `bare: "true"` and this check.
 */
export const checkVersionValue = (value: string): string | undefined =>
  value === "raw" || parseGoBool(value) !== undefined ? undefined : "want true, false or raw";

/** The flag itself, for a program whose flag record keeps it as `version`. */
export const VERSION_FLAG = {
  name: "version",
  kind: "string",
  bare: "true",
  field: "version",
  help: "Print the version and exit (--version=raw for details).",
  check: checkVersionValue,
} as const;

/** What the flag's value asks for: "" nothing, "true" the one line, "raw" the details. */
export function versionAsked(value: string | undefined): "" | "true" | "raw" {
  if (value === "raw") return "raw";
  return value !== undefined && parseGoBool(value) ? "true" : "";
}

/** A program and the upstream release it stands in for. */
export interface ProgramVersion {
  /** As the one line starts: "Switchyard-Proxy". */
  readonly name: string;
  /** Its own version, without the v. */
  readonly version: string;
  /** "kube-proxy v1.37.2". */
  readonly upstream: string;
}

/**
 * What `--version` prints: upstream prints `Kubernetes v1.37.2`; this says plainly what the program is and which
 * release it stands in for. raw prints the details as one JSON object, as upstream's raw form does.
 */
export function versionText(p: ProgramVersion, raw: boolean): string {
  if (!raw) return `${p.name} v${p.version} (${p.upstream} compatible)`;
  return JSON.stringify({
    gitVersion: `v${p.version}`,
    compatibleWith: p.upstream,
    platform: `${process.platform}/${process.arch}`,
    nodeVersion: process.versions.node,
  });
}
