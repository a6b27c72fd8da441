// switchyard-proxy's bin (compiled dist, no TypeScript loader), as a user runs it, in a node network namespace,
// output to a file. `ip netns exec` gives the process a private /sys; ebpf mode needs the host's (the cgroup2
// and BPF file systems), so it enters the namespace with `nsenter --net` instead, which joins the network
// namespace only. Both exec the proxy, so the child's pid is the proxy's.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PROXY_BIN = join(import.meta.dirname, "..", "..", "apps", "kube-proxy", "bin", "switchyard-proxy.js");

export type Enter = "ip-netns-exec" | "nsenter";

export function startBuiltProxy(
  ns: string,
  args: readonly string[],
  env: Record<string, string>,
  enter: Enter = "ip-netns-exec",
) {
  const logPath = join(mkdtempSync(join(tmpdir(), "sy-bench-proxy-")), "proxy.log");
  const fd = openSync(logPath, "w");
  // SY_BENCH_PROFILE_DIR=<dir>: a CPU profile of the proxy, written when it exits.
  const dir = process.env.SY_BENCH_PROFILE_DIR;
  const profile = dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
  const [command = "", ...entering] =
    enter === "nsenter" ? ["nsenter", `--net=/run/netns/${ns}`] : ["ip", "netns", "exec", ns];
  const child = spawn(command, [...entering, process.execPath, ...profile, PROXY_BIN, ...args], {
    stdio: ["ignore", fd, fd],
    env: { ...process.env, ...env },
  });
  return {
    child,
    log: () => readFileSync(logPath, "utf8"),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
    /** Resolves to the exit code once the process has exited by itself. */
    async exitCode(): Promise<number | null> {
      if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
      return child.exitCode;
    },
  };
}
