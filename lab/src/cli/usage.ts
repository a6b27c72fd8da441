/** A mistake in how the command was typed: exit code 2, and main prints the command's usage line after it. */
export class UsageError extends Error {}

/** A port flag: a whole number from `lowest` (1; 0 where 0 asks the kernel for a free port) to 65535. */
export function portFlag(
  command: string,
  name: string,
  value: string | undefined,
  lowest: 0 | 1 = 1,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  // Number("") is 0, a port where `lowest` is 0: an empty value is refused by name.
  if (value.trim() === "" || !Number.isInteger(n) || n < lowest || n > 65535) {
    throw new UsageError(`${command}: --${name} must be a port number ${lowest}-65535, got "${value}"`);
  }
  return n;
}

/** A flag that counts something: a whole number from 1, or a one-line error naming it. */
export function positiveIntFlag(
  command: string,
  name: string,
  value: string | undefined,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${command}: --${name} must be a positive integer, got "${value}"`);
  return n;
}
