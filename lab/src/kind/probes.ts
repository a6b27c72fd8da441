import { execFile } from "node:child_process";
import type { Probe, RuntimeFacts } from "./select-runtime.js";

/** Runs a command with a time limit; its first stderr line (or the spawn error) is the reason it did not work. */
function probe(argv: readonly string[], timeoutMs = 10_000): Promise<Probe> {
  const [bin, ...args] = argv;
  return new Promise((resolve) => {
    execFile(bin ?? "", args, { encoding: "utf8", timeout: timeoutMs }, (err, _stdout, stderr) => {
      if (!err) resolve({ ok: true });
      else if ((err as NodeJS.ErrnoException).code === "ENOENT")
        resolve({ ok: false, why: `${bin} is not on PATH` });
      else resolve({ ok: false, why: stderr.trim().split("\n")[0] || err.message });
    });
  });
}

/** The facts of this machine, probing lazily. */
export function machineFacts(): RuntimeFacts {
  return {
    platform: process.platform,
    uid: process.getuid?.(),
    netns: () => probe(["ip", "netns", "list"]),
    docker: () => probe(["docker", "info", "--format", "{{.ServerVersion}}"]),
  };
}

/** `docker info` alone, for `up --runtime kind`: the engine must answer before anything is built. */
export const dockerProbe = () => probe(["docker", "info", "--format", "{{.ServerVersion}}"]);
