import { type ParseArgsConfig, parseArgs } from "node:util";

/** A mistake in how the command was typed: exit code 2, like most CLIs. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig["options"]>;
type ParsedFlags<T extends Options> = ReturnType<
  typeof parseArgs<{ options: T; strict: true; allowPositionals: true }>
>;

/** parseArgs with errors turned into one line naming the command and the bad flag. */
export function parseFlags<T extends Options>(command: string, args: string[], options: T): ParsedFlags<T> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true }) as ParsedFlags<T>;
  } catch (err) {
    const message = (err as Error).message.replace(/\. To specify a positional.*$/s, "");
    throw new UsageError(`${command}: ${message}`);
  }
}

export function portFlag(command: string, name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    throw new UsageError(`${command}: --${name} must be a port number 1-65535, got "${value}"`);
  }
  return n;
}
