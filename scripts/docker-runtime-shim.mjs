// Privileged containers on hosts whose capability bounding set is smaller than the kernel's full set.
// runc gives a --privileged container every capability the kernel knows (0..cap_last_cap); when the host's
// own bounding set lacks one (on this project's CI machine: CAP_SYS_RESOURCE), runc fails at start with
// "unable to apply caps: operation not permitted". missingPrivilegedCaps() detects that; only then does
// scripts/docker-engine.mjs register the runtime written here, which removes exactly the missing capabilities
// from the bundle's config.json and then runs runc with the same arguments (scripts/runc-drop-caps.mjs).
// On a normal Docker host, Docker Desktop or a CI runner the list is empty and nothing is registered.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Linux capability numbers (include/uapi/linux/capability.h).
export const capNames = [
  "CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE ",
  "NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT ",
  "SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE ",
  "AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ ",
  "PERFMON BPF CHECKPOINT_RESTORE",
]
  .join("")
  .split(" ")
  .map((name) => `CAP_${name}`);

export function boundingSet() {
  const line = readFileSync("/proc/self/status", "utf8").match(/^CapBnd:\s*([0-9a-f]+)$/m);
  if (!line) throw new Error("no CapBnd line in /proc/self/status");
  return BigInt(`0x${line[1]}`);
}

// The capabilities a privileged container is given that this host's bounding set does not hold.
export function missingPrivilegedCaps() {
  if (process.platform !== "linux") return [];
  const last = Number(readFileSync("/proc/sys/kernel/cap_last_cap", "utf8").trim());
  const bnd = boundingSet();
  const missing = [];
  for (let cap = 0; cap <= last; cap++)
    if ((bnd & (1n << BigInt(cap))) === 0n) missing.push(capNames[cap] ?? `cap ${cap}`);
  return missing;
}

// Writes <dir>/<name>: a sh wrapper that runs scripts/runc-drop-caps.mjs (copied next to it, so the engine
// does not depend on this checkout staying where it is) on this Node, with the real runc's path.
export function writeRuntimeShim(dir, name) {
  const runc = spawnSync("sh", ["-c", "command -v runc"], { encoding: "utf8" }).stdout.trim();
  if (!runc) throw new Error("runc is not on PATH (Debian's docker.io installs it)");
  mkdirSync(dir, { recursive: true });
  const script = join(dir, `${name}.mjs`);
  copyFileSync(join(dirname(fileURLToPath(import.meta.url)), "runc-drop-caps.mjs"), script);
  const wrapper = join(dir, name);
  writeFileSync(
    wrapper,
    `#!/bin/sh\n# Written by scripts/docker-engine.mjs: runc without the capabilities this host cannot grant.\nSY_RUNC='${runc}' exec '${process.execPath}' '${script}' "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  return wrapper;
}
