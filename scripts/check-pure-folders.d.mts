/** The folders held pure, relative to the repository root. */
export const PURE_FOLDERS: readonly string[];
/** The specifiers a module imports at run time. */
export function runtimeImports(text: string): string[];
/** Every way the pure folders reach I/O, one line each: the chain of imports, then why. */
export function findImpurities(root: string, folders?: readonly string[]): string[];
/** The resolver's plugins: where they live, and the only files outside them that may import one. */
export const PLUGIN_BOUNDARIES: {
  readonly src: string;
  readonly plugins: string;
  readonly assembly: readonly string[];
};
/** Crossings let through until @switchyard/basics replaces the files they start or end in. */
export const PENDING_CROSSINGS: readonly string[];
/** Every import that crosses a plugin boundary, one line each: `<file> -> <specifier> (why)`. */
export function findPluginCrossings(
  root: string,
  rules?: { readonly src: string; readonly plugins: string; readonly assembly: readonly string[] },
  pending?: readonly string[],
): string[];
