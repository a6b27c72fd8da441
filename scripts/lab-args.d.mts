export function labCommandLine(args: readonly string[]): string[];
