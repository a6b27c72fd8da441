/** One import that breaks a rule: where it is, what it imports, and the line the check prints. */
export interface Violation {
  file: string;
  line: number;
  specifier: string;
  message: string;
}
/** Each workspace package's name mapped to the workspace packages it depends on, in any dependency field. */
export function readPackageGraph(root: string): Map<string, string[]>;
/** The first cycle found, as the path that closes it ([a, b, a]); undefined when the graph has none. */
export function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined;
/** The modules a file imports, with the line of each. */
export function readImports(text: string, fileName?: string): { specifier: string; line: number }[];
/** Reads every import of the repository at root: how many files and imports, and the violations. */
export function checkPackageGraph(root: string): { files: number; imports: number; violations: Violation[] };
