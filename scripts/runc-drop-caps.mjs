// The runtime dockerd calls instead of runc on hosts whose capability bounding set is incomplete (see
// scripts/docker-runtime-shim.mjs, which decides whether it is registered at all). For `create` and `run` it
// removes from the bundle's config.json the capabilities this host's bounding set lacks, and for `exec` (docker
// exec) from the process file it is given; then, for every command, it runs the real runc ($SY_RUNC) with the
// same arguments, the same stdio, and its exit status.
// Self-contained on purpose: it is copied next to the engine's socket and runs from there.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const names = [
  "CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE ",
  "NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT ",
  "SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE ",
  "AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ ",
  "PERFMON BPF CHECKPOINT_RESTORE",
]
  .join("")
  .split(" ");
// runc's global options that take a value, so their value is not mistaken for the command.
const globalsWithValue = new Set(["--root", "--log", "--log-format", "--criu", "--rootless"]);

// The command, the bundle folder (create, run) and the process file (exec --process FILE).
function commandAndFiles(args) {
  let i = 0;
  while (i < args.length && args[i].startsWith("-")) i += globalsWithValue.has(args[i]) ? 2 : 1;
  const command = args[i];
  let bundle = process.cwd();
  let processFile;
  for (let j = i + 1; j < args.length; j++) {
    if (args[j] === "--bundle" || args[j] === "-b") bundle = args[j + 1];
    else if (args[j].startsWith("--bundle=")) bundle = args[j].slice("--bundle=".length);
    else if (args[j] === "--process" || args[j] === "-p") processFile = args[j + 1];
    else if (args[j].startsWith("--process=")) processFile = args[j].slice("--process=".length);
  }
  return { command, bundle, processFile };
}

function missingCaps() {
  const bnd = BigInt(`0x${readFileSync("/proc/self/status", "utf8").match(/^CapBnd:\s*([0-9a-f]+)$/m)[1]}`);
  return new Set(names.filter((_, cap) => (bnd & (1n << BigInt(cap))) === 0n).map((name) => `CAP_${name}`));
}

// Rewrites `file` with the missing capabilities taken out of the OCI process object `processOf` finds in it.
function dropMissingCaps(file, processOf) {
  const missing = missingCaps();
  const doc = JSON.parse(readFileSync(file, "utf8"));
  const caps = processOf(doc)?.capabilities;
  if (!caps || missing.size === 0) return;
  for (const set of ["bounding", "effective", "inheritable", "permitted", "ambient"])
    if (Array.isArray(caps[set])) caps[set] = caps[set].filter((cap) => !missing.has(cap));
  writeFileSync(file, JSON.stringify(doc));
}

const args = process.argv.slice(2);
const { command, bundle, processFile } = commandAndFiles(args);
if (command === "create" || command === "run") dropMissingCaps(join(bundle, "config.json"), (c) => c.process);
if (command === "exec" && processFile) dropMissingCaps(processFile, (p) => p);
const runc = spawnSync(process.env.SY_RUNC || "runc", args, { stdio: "inherit" });
if (runc.error) {
  console.error(`switchyard-runc: cannot run ${process.env.SY_RUNC || "runc"}: ${runc.error.message}`);
  process.exit(1);
}
process.exit(runc.status ?? 1);
