import { existsSync, readFileSync } from "node:fs";

/**
 * The command that runs a container's process under a shim, as containerd runs each container under its
 * containerd-shim: a shell that waits for the process and writes its exit code to `exitFile` (by rename, so a
 * reader never sees half of it), then exits with that code. The shim, not the agent, is the process's parent, so
 * the process outlives an agent that stops or crashes, and a restarted agent still learns how it ended. The shim
 * catches TERM, INT and HUP (a signal meant for the agent's process group must not end it before the process);
 * a caught signal is reset in the process it starts, so the container keeps every default. dash waits on for a
 * foreground command while it runs the trap.
 */
export function shimArgv(exitFile: string, argv: readonly string[]): string[] {
  const script = [
    "f=$1; shift",
    "trap : TERM INT HUP",
    '"$@"',
    "c=$?",
    'echo "$c" >"$f.tmp" && mv "$f.tmp" "$f"',
    'exit "$c"',
  ].join("\n");
  return ["/bin/sh", "-c", script, "sy-shim", exitFile, ...argv];
}

/** The shim's one child (the container's process), or undefined before it has forked or after it ended. */
export function shimChild(shimPid: number): number | undefined {
  try {
    const first = readFileSync(`/proc/${shimPid}/task/${shimPid}/children`, "utf8").trim().split(/\s+/)[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * When a process started, in clock ticks since boot (field 22 of /proc/<pid>/stat): with the pid it names one
 * process for good, where a pid alone may have been handed to another since. Undefined when none has that pid.
 */
export function processStartTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name, in parentheses, may hold spaces; the fields after its closing one are space-separated.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[19]);
  } catch {
    return undefined;
  }
}

/** The exit code the shim wrote, or undefined while the process runs (or when the shim never wrote one). */
export function readExitCode(exitFile: string): number | undefined {
  if (!existsSync(exitFile)) return undefined;
  const code = Number.parseInt(readFileSync(exitFile, "utf8"), 10);
  return Number.isNaN(code) ? undefined : code;
}
