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

/** Caddy's SyntaxErr: `FILE:LINE - Syntax error: Unexpected token 'TOKEN', expecting 'EXPECTED'`. */
export class CorefileSyntaxError extends CorefileError {
  constructor(file: string, line: number, token: string, expected: string, plugin?: string) {
    super(file, line, `Unexpected token '${token}', expecting '${expected}'`, plugin);
    this.message = `${plugin ? `plugin/${plugin}: ` : ""}${file}:${line} - Syntax error: ${this.reason}`;
  }
}

/**
 * CoreDNS's plugin.ErrOnce, which its setups return as it is: `plugin/NAME: this plugin can only be used once per
 * Server Block`, with no file or line (the position is kept on the object for callers that want it).
 */
export class PluginOnceError extends CorefileError {
  constructor(file: string, line: number, plugin: string) {
    super(file, line, "this plugin can only be used once per Server Block", plugin);
    this.message = `plugin/${plugin}: ${this.reason}`;
  }
}

/** Where a token came from. */
export interface Position {
  file: string;
  line: number;
}
