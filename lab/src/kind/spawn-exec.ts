import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { Exec } from "../exec.js";

/**
 * An Exec for long, chatty commands (docker build, kind create cluster): output streams line by line to
 * `onLine` (progress) and, in full, to `log`; nothing is buffered but stdout, so a long build cannot overflow a
 * buffer. A failure's message is the last line the command wrote: for docker and kind that is the reason,
 * the first lines are progress.
 */
export function spawnExec(log: string, onLine?: (line: string) => void): Exec {
  mkdirSync(dirname(log), { recursive: true });
  return (argv) =>
    new Promise((resolve, reject) => {
      const [bin, ...args] = argv;
      if (!bin) {
        reject(new Error("empty command"));
        return;
      }
      appendFileSync(log, `\n$ ${argv.join(" ")}\n`);
      const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let last = "";
      const feed = (chunk: Buffer) => {
        appendFileSync(log, chunk);
        for (const line of chunk.toString().split("\n")) {
          if (!line.trim()) continue;
          last = line.trim();
          onLine?.(last);
        }
      };
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on("data", feed);
      child.on("error", (err) =>
        reject(
          new Error(
            `${basename(bin)}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "not found" : err.message}`,
          ),
        ),
      );
      child.on("close", (code, signal) => {
        appendFileSync(log, stdout);
        if (code === 0) resolve(stdout);
        else {
          const why = last || `exit ${code ?? signal}`;
          reject(new Error(`${basename(bin)} ${args[0] ?? ""}: ${why} (full output: ${log})`));
        }
      });
    });
}
