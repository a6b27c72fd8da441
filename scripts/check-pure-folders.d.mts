/** The folders held pure, relative to the repository root. */
export const PURE_FOLDERS: readonly string[];
/** The specifiers a module imports at run time. */
export function runtimeImports(text: string): string[];
/** Every way the pure folders reach I/O, one line each: the chain of imports, then why. */
export function findImpurities(root: string, folders?: readonly string[]): string[];
