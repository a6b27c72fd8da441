import { execFile } from "node:child_process";

/** Runs a command and resolves with its stdout; rejects with an Error whose message is its first stderr line. */
export type Exec = (argv: readonly string[]) => Promise<string>;

export const realExec: Exec = (argv) =>
  new Promise((resolve, reject) => {
    const [bin, ...args] = argv;
    if (!bin) {
      reject(new Error("empty command"));
      return;
    }
    // Rule dumps of a large cluster (iptables-save at 5000 Services) run to tens of MiB; the default is 1 MiB.
    execFile(bin, args, { encoding: "utf8", maxBuffer: 512 * 2 ** 20 }, (err, stdout, stderr) => {
      if (!err) {
        resolve(stdout);
        return;
      }
      const why = stderr.trim().split("\n")[0] || err.message;
      reject(new Error(`${argv.join(" ")}: ${why}`));
    });
  });
