// The design not taken, for measuring only: bpf/tc-ownct.c compiled into a scratch directory and attached, its
// programs through tcx links pinned under the pin root's tc/ directory (so removeSockPrograms detaches them
// as it does the real program's). Its lb4_* maps are the real ones, found by name under the pin root.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { clangArgs } from "../../bpf/build.mjs";
import { DEFAULT_OUT_DIR } from "../../bpf/gen-layout.mjs";
import { type Handle, loadLibbpf } from "../../src/apply/bpf-libbpf.js";
import { detachPinnedLink, tcLinksDir } from "../../src/apply/bpf-loader.js";

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), "../../bpf/tc-ownct.c");
const BPF_TCX_INGRESS = 46;

/** Compiles the prototype with the build's flags and headers into a scratch directory; returns the object's path. */
export function compilePrototype(): string {
  const output = join(mkdtempSync(join(tmpdir(), "sy-tc-ownct-")), "tc-ownct.bpf.o");
  const r = spawnSync("clang", clangArgs(SOURCE, DEFAULT_OUT_DIR, output), { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`clang failed on tc-ownct.c: ${r.stderr}`);
  return output;
}

/** Removes the scratch directory compilePrototype made. */
export function removePrototype(objectPath: string): void {
  rmSync(dirname(objectPath), { recursive: true, force: true });
}

/** Loads the object and attaches each program to its device's ingress (in this process's namespace). */
export async function attachPrototype(
  objectPath: string,
  pinRoot: string,
  attachments: readonly { device: string; program: string }[],
): Promise<string[]> {
  const libbpf = await loadLibbpf();
  const log = libbpf.allocLog(1 << 20);
  const obj = libbpf.openObject(objectPath, { pinRoot, log, logSize: 1 << 20 });
  if (obj === null) throw new Error(`cannot open ${objectPath}`);
  try {
    const rc = libbpf.loadObject(obj);
    if (rc < 0)
      throw new Error(
        `loading the prototype: ${rc}\n${libbpf.takeMessages().join("\n")}\n${libbpf.readLog(log).slice(-4000)}`,
      );
    const pins: string[] = [];
    for (const { device, program } of attachments) {
      const prog = libbpf.findProgram(obj, program) as Handle;
      const link = libbpf.linkCreate(libbpf.programFd(prog), libbpf.ifNameToIndex(device), BPF_TCX_INGRESS);
      if (link < 0) throw new Error(`attaching ${program} to ${device}: ${link}`);
      const pin = join(tcLinksDir(pinRoot), `${device}-ingress`);
      detachPinnedLink(libbpf, pin);
      const pinned = libbpf.objPin(link, pin);
      libbpf.close(link);
      if (pinned < 0) throw new Error(`pinning ${pin}: ${pinned}`);
      pins.push(pin);
    }
    return pins;
  } finally {
    libbpf.closeObject(obj);
    libbpf.freeLog(log);
  }
}
