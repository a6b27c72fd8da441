/** Where the build writes the socket programs' object. */
export const OBJECT_PATH: string;
/** Where it writes the socket-destroy iterator's object. */
export const DESTROY_OBJECT_PATH: string;
/** Where the build writes the tc program's object. */
export const TC_OBJECT_PATH: string;
/** Where the build writes the XDP program's object. */
export const XDP_OBJECT_PATH: string;
/** clang's arguments to compile one eBPF source with the generated headers in `includeDir`. */
export function clangArgs(source: string, includeDir: string, output: string): string[];
