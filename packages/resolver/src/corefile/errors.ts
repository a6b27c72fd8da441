/**
 * A Corefile problem, printed the way CoreDNS prints it: `Corefile:7 - Error during parsing: ...`, and a plugin's
 * setup error with the plugin in front, as caddy wraps it: `plugin/loop: Corefile:2 - Error during parsing: ...`.
 */
export class CorefileError extends Error {
  override name = "CorefileError";
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
    readonly plugin?: string,
  ) {
    super(`${plugin ? `plugin/${plugin}: ` : ""}${file}:${line} - Error during parsing: ${reason}`);
  }
}

/** Where a token came from. */
export interface Position {
  file: string;
  line: number;
}
