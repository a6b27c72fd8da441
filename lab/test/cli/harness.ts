import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../src/cli/main.js";
import { labEntry } from "../../src/self.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * switchyard-lab as a user runs it: a process of its own (src/cli/bin.ts through tsx, so no build is needed),
 * with `env` on top of this process's environment and `input` on its stdin. The input comes from a file, not
 * a pipe of node's: those are sockets, and an interactive fish refuses a socket on stdin.
 */
export function runCli(
  args: readonly string[],
  o: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const [bin = process.execPath, ...entry] = labEntry("cli/bin");
  const inputFile = join(mkdtempSync(join(tmpdir(), "sy-cli-input-")), "stdin");
  writeFileSync(inputFile, o.input ?? "");
  const stdin = openSync(inputFile, "r");
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [...entry, ...args], {
      env: { ...process.env, ...o.env },
      stdio: [stdin, "pipe", "pipe"],
      timeout: o.timeoutMs ?? 60_000,
    });
    closeSync(stdin);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => (stdout += d));
    child.stderr?.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
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

/** The words fish's own completion offers for `line` (its text up to the cursor) from the script in `file`. */
export function fishCompletions(file: string, line: string): string[] {
  const out = execFileSync("fish", ["--no-config", "-c", `source '${file}'; complete -C '${line}'`], {
    encoding: "utf8",
  });
  return out
    .trimEnd()
    .split("\n")
    .map((l) => l.split("\t")[0] ?? "");
}
