import { resolve } from "node:path";

/** A Corefile's text and the path it is known by (in error messages, and what `reload` rereads). */
export interface CorefileSource {
  text: string;
  /** As CoreDNS names it: `-conf`'s value as given (relative to the working folder), `/dev/stdin`, `Corefile`. */
  file: string;
  /** Whether `file` can be read again: false for stdin and the built-in default, whose text never changes. */
  rereadable: boolean;
}

export interface SourceIo {
  cwd: string;
  readFile(path: string): string;
  /** Standard input's text when it is a pipe or a file; undefined when it is a terminal (or absent). */
  stdin(): string | undefined;
}

/** What CoreDNS serves when it finds no Corefile at all (core/dnsserver's default input). */
export const defaultCorefile = (port: number) => `.:${port} {\nwhoami\nlog\n}\n`;

/**
 * Where the Corefile comes from, in the order of CoreDNS's loaders: `-conf stdin` reads a piped standard input
 * (a terminal gives nothing, and the search goes on); `-conf FILE` reads that file, and a missing one is an
 * error; then ./Corefile when it exists; then the default above, on the default port. Errors are the one line
 * the caller prints; they carry the errno code and the path, as Go's os.ReadFile error does. The file keeps the
 * name it was given, which is what CoreDNS's setup errors print; the caller reads it relative to `cwd`.
 */
export function corefileSource(conf: string | undefined, port: number, io: SourceIo): CorefileSource {
  if (conf === "stdin") {
    const text = io.stdin();
    // Go's os.Stdin is named /dev/stdin, and caddy's pipe loader names the input after it.
    if (text !== undefined) return { text, file: "/dev/stdin", rereadable: false };
  } else if (conf !== undefined && conf !== "") {
    return { text: readOrThrow(io, resolve(io.cwd, conf)), file: conf, rereadable: true };
  }
  const local = resolve(io.cwd, "Corefile");
  try {
    return { text: io.readFile(local), file: "Corefile", rereadable: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw readError(local, err);
  }
  return { text: defaultCorefile(port), file: "Corefile", rereadable: false };
}

function readOrThrow(io: SourceIo, file: string): string {
  try {
    return io.readFile(file);
  } catch (err) {
    throw readError(file, err);
  }
}

function readError(file: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  return new Error(`cannot read Corefile ${file}: ${code}`);
}
