// V8 sizes its young generation from the memory it sees. With no container limit on a big machine each
// semi-space may grow to 32-64 MiB, so a server that makes a lot of short-lived garbage (decoding API objects,
// answering queries) holds that much more at its peak than the same server under a limit, where Node picks
// about 1 MiB. Upstream's Go programs have no such pool. The commands start themselves again once with a small
// semi-space, keeping their pid (process.execve, Node 22.15+), before they load anything else.

/** The flag each command restarts with, unless the user chose a size. */
export const YOUNG_GENERATION_FLAG = "--max-semi-space-size=2";

const SIZING = /^--(max-semi-space-size|max-heap-size|semi-space-growth-factor)\b/;

export interface RestartInput {
  /** node's own arguments (process.execArgv). */
  readonly execArgv: readonly string[];
  /** The command's arguments, process.argv (node, script, ...). */
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The variable that, set to "keep", leaves Node's own sizing (e.g. SWITCHYARD_PROXY_NODE_FLAGS). */
  readonly keepVariable: string;
}

/**
 * The argv to start the process again with, or undefined to go on as it is: a semi-space, heap size or growth
 * factor given on node's command line or in NODE_OPTIONS wins, and so does `<keepVariable>=keep`.
 */
export function youngGenerationRestart(input: RestartInput): string[] | undefined {
  const given = [...input.execArgv, ...(input.env.NODE_OPTIONS ?? "").split(/\s+/)];
  if (given.some((a) => SIZING.test(a)) || input.env[input.keepVariable] === "keep") return undefined;
  const [node, ...rest] = input.argv;
  if (node === undefined) return undefined;
  return [node, YOUNG_GENERATION_FLAG, ...input.execArgv, ...rest];
}

/**
 * Starts this process again once with YOUNG_GENERATION_FLAG (see youngGenerationRestart); returns only when it
 * does not: no process.execve (older Node), not allowed here (a worker thread), or the user chose.
 */
export function restartWithSmallYoungGeneration(keepVariable: string): void {
  const argv = youngGenerationRestart({
    execArgv: process.execArgv,
    argv: [process.execPath, ...process.argv.slice(1)],
    env: process.env,
    keepVariable,
  });
  if (!argv || typeof process.execve !== "function") return;
  try {
    process.execve(process.execPath, argv);
  } catch {
    // Not allowed here: run with Node's own sizing.
  }
}
