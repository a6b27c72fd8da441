import { main } from "./main.js";

/** What one run of the command line did: its exit code and what it printed. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI in this process, its console output captured (fast enough to run over every command of the table). */
export async function runMain(args: string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  console.log = (...a: unknown[]) => out.push(`${a.join(" ")}\n`);
  console.error = (...a: unknown[]) => err.push(`${a.join(" ")}\n`);
  try {
    const code = await main(args);
    return { code, stdout: out.join(""), stderr: err.join("") };
  } finally {
    console.log = log;
    console.error = error;
  }
}
