/** Where the build writes the headers (dist/bpf under the package). */
export const DEFAULT_OUT_DIR: string;
export const LAYOUT_HEADER: string;
export const MAPS_HEADER: string;
/** layout.ts's camelCase field name in C's snake_case. */
export function cFieldName(name: string): string;
/** Writes both headers into `outDir` from the compiled layout; resolves to the directory. */
export function generateHeaders(outDir?: string): Promise<string>;
