import type { FlagSet, FlagSpec } from "./flag-spec.js";

/** The value's type as help shows it; none for a flag that can be given bare. */
function typeName(flag: FlagSpec<unknown>): string {
  const { kind } = flag;
  if (kind === "bool" || flag.bare !== undefined) return "";
  if (typeof kind === "object") return "read" in kind ? kind.type : "int";
  return kind === "bool-map" ? "key=bool,..." : kind;
}

/**
 * Help text in the set's dialect: pflag's as kube-proxy and kube-controller-manager print it here (flags in
 * declaration order), or Go's flag.PrintDefaults (sorted by name, help after a tab on the next line).
 */
export function usage<T>(set: FlagSet<T>, program: string): string {
  const flags = set.flags as readonly FlagSpec<unknown>[];
  const withType = (dash: string, flag: FlagSpec<unknown>) => {
    const type = typeName(flag);
    const short = flag.shorthand === undefined || set.dialect === "go" ? "" : `-${flag.shorthand}, `;
    return `  ${short}${dash}${flag.name}${type === "" ? "" : ` ${type}`}`;
  };
  if (set.dialect === "go") {
    const sorted = [...flags].sort((a, b) => (a.name < b.name ? -1 : 1));
    return `Usage of ${program}:\n${sorted.map((f) => `${withType("-", f)}\n    \t${f.help}\n`).join("")}`;
  }
  const lines = flags.map((f) => `${withType("--", f)}\n      ${f.help}`);
  return `Usage: ${program} [flags]\n\n${lines.join("\n")}\n`;
}
