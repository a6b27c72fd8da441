// A program's main() run in-process, as its bin runs it, with what it writes kept for the test to read.

/** What a program's main() is given by its bin (the apps' main functions all take this). */
export interface MainIO {
  readonly argv: string[];
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  /** Resolves when the program should stop; never, here: a test runs only mains that return by themselves. */
  readonly stopSignal: Promise<unknown>;
}

/** Runs main with argv; its exit code and both streams' text. */
export async function runMain(
  main: (io: MainIO) => Promise<number>,
  ...argv: string[]
): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main({
    argv,
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    stopSignal: new Promise(() => {}),
  });
  return { code, out, err };
}
