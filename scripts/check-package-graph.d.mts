/** Each workspace package's name mapped to the workspace packages it depends on, in any dependency field. */
export function readPackageGraph(root: string): Map<string, string[]>;
/** The first cycle found, as the path that closes it ([a, b, a]); undefined when the graph has none. */
export function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined;
