/** A Corefile problem, printed the way CoreDNS prints it: `Corefile:7 - Error during parsing: ...`. */
export class CorefileError extends Error {
  override name = "CorefileError";
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line} - Error during parsing: ${reason}`);
  }
}

/** Where a token came from. */
export interface Position {
  file: string;
  line: number;
}
