import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CliResult } from "../../src/cli/captured.js";
import { labEntry } from "../../src/self.js";

/** The CLI in this process, its output captured: src/cli/captured.ts (also `@switchyard/lab/cli`). */
export { type CliResult, runMain } from "../../src/cli/captured.js";

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
