/** One import that breaks a rule: where it is, what it imports, and the line the check prints. */
export interface Violation {
  file: string;
  line: number;
  specifier: string;
  message: string;
}
/** An allowlisted import: its line in the allowlist, the file and the import. */
export interface AllowlistEntry {
  line: number;
  file: string;
  specifier: string;
}
/** The allowlist of known violations, relative to the repository root. */
export const ALLOWLIST: string;
/** Each workspace package's name mapped to the workspace packages it depends on, in any dependency field. */
export function readPackageGraph(root: string): Map<string, string[]>;
/** The first cycle found, as the path that closes it ([a, b, a]); undefined when the graph has none. */
export function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined;
/** The modules a file imports, with the line of each. */
export function readImports(text: string, fileName?: string): { specifier: string; line: number }[];
/** Reads every import of the repository at root: how many files and imports, and the violations. */
export function checkPackageGraph(root: string): { files: number; imports: number; violations: Violation[] };
/** The allowlist's lines, skipping blank lines and # comments. */
export function readAllowlist(text: string): AllowlistEntry[];
/** The violations the allowlist does not name, how many it names, and its lines that name none any more. */
export function applyAllowlist(
  violations: readonly Violation[],
  allowlist: readonly AllowlistEntry[],
): { failures: Violation[]; allowed: number; stale: AllowlistEntry[] };
