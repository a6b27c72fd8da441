#!/usr/bin/env node
// Compiles the eBPF programs into dist/ebpf/, after the package's TypeScript (the "build" script runs tsc first):
// the socket programs (bpf/sock.c) into switchyard-sock.bpf.o, the socket-destroy iterator (bpf/sock-destroy.c,
// licensed apart) into switchyard-sock-destroy.bpf.o, the tc program (bpf/tc.c) into switchyard-tc.bpf.o and the
// XDP program (bpf/xdp.c, the same balancing at the XDP hook) into switchyard-xdp.bpf.o. The headers come from
// the compiled layout (gen-layout.mjs). -g keeps the BTF that libbpf needs for the maps' definitions and CO-RE;
// -mcpu=v3 lets clang use 32-bit jumps and ALU (kernel 5.1+).
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateHeaders } from "./gen-layout.mjs";

const bpfDir = dirname(fileURLToPath(import.meta.url));
const packageDir = join(bpfDir, "..");
export const OBJECT_PATH = join(packageDir, "dist", "ebpf", "switchyard-sock.bpf.o");
export const DESTROY_OBJECT_PATH = join(packageDir, "dist", "ebpf", "switchyard-sock-destroy.bpf.o");
export const TC_OBJECT_PATH = join(packageDir, "dist", "ebpf", "switchyard-tc.bpf.o");
export const XDP_OBJECT_PATH = join(packageDir, "dist", "ebpf", "switchyard-xdp.bpf.o");

/** Each source and the object it compiles to. */
const OBJECTS = [
  { source: "sock.c", output: OBJECT_PATH },
  { source: "sock-destroy.c", output: DESTROY_OBJECT_PATH },
  { source: "tc.c", output: TC_OBJECT_PATH },
  { source: "xdp.c", output: XDP_OBJECT_PATH },
];

const CLANG_MISSING = "the eBPF programs need clang to build: apt install clang libbpf-dev";

/**
 * Where the host's <asm/types.h> lives: <linux/bpf.h> includes it, and clang's bpf target does not search the
 * multiarch directory (/usr/include/x86_64-linux-gnu on Debian) by itself.
 */
function multiarchInclude() {
  const r = spawnSync("clang", ["-print-multiarch"], { encoding: "utf8" });
  const triple = r.status === 0 ? r.stdout.trim() : "";
  return triple ? [`-I/usr/include/${triple}`] : [];
}

/** clang's arguments for one source; exported for the header test, which compiles the same way. */
export function clangArgs(source, includeDir, output) {
  return [
    "-O2",
    "-g",
    "-target",
    "bpf",
    "-mcpu=v3",
    "-Wall",
    "-Werror",
    `-I${includeDir}`,
    ...multiarchInclude(),
    "-c",
    source,
    "-o",
    output,
  ];
}

async function main() {
  const headers = spawnSync("clang", ["-target", "bpf", "-E", "-x", "c", "-o", "/dev/null", "-"], {
    input: "#include <bpf/bpf_helpers.h>\n",
    stdio: ["pipe", "ignore", "ignore"],
  });
  if (headers.error || headers.status !== 0) {
    // No clang at all, or no libbpf headers for it.
    console.error(CLANG_MISSING);
    process.exit(1);
  }
  const includeDir = await generateHeaders();
  mkdirSync(dirname(OBJECT_PATH), { recursive: true });
  for (const { source, output } of OBJECTS) {
    const r = spawnSync("clang", clangArgs(join(bpfDir, source), includeDir, output), { stdio: "inherit" });
    if (r.status !== 0) {
      console.error(`clang failed on bpf/${source} (exit ${r.status ?? r.signal})`);
      process.exit(1);
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
