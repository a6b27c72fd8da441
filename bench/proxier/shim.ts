// What each proxy sends to the kernel, measured the same way for both: a directory put first on PATH
// with wrappers for iptables-restore (and our iptables-nft-restore) and `nft -f`. A wrapper copies its
// stdin with tee into a file while the real binary reads it, and logs (in the background, so the proxy
// does not wait for it) start and end time, tool, bytes, lines and IP family. Upstream kube-proxy finds these
// tools on PATH like ours does, so neither proxy knows it is measured; the cost is one bash and one tee
// per call, for both (measured: `overheadMs`).
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "../machine.js";

export interface KernelWrite {
  /** Wall clock, ms since the epoch, when the call started. */
  readonly at: number;
  readonly tool: string;
  readonly bytes: number;
  /** Lines of input: rules/chains for iptables-restore, commands for nft. */
  readonly lines: number;
  readonly family: "IPv4" | "IPv6";
  /** How long the proxy waited for the real tool (wrapper start to the tool's exit), ms. */
  readonly ms: number;
  /** The tool's system CPU time (and tee's, a few ms), from the wrapper's `times`, ms. */
  readonly kernelMs: number;
}

type Wrapped = Record<string, { real: string; stdinOnly: boolean }>;

const NFT_BACKEND: Wrapped = {
  "iptables-restore": { real: "/usr/sbin/iptables-restore", stdinOnly: false },
  "iptables-nft-restore": { real: "/usr/sbin/iptables-nft-restore", stdinOnly: false },
  "ip6tables-restore": { real: "/usr/sbin/ip6tables-restore", stdinOnly: false },
  "ip6tables-nft-restore": { real: "/usr/sbin/ip6tables-nft-restore", stdinOnly: false },
  // only `nft -f ...` carries a transaction on stdin; list/--json calls go straight through
  nft: { real: "/usr/sbin/nft", stdinOnly: true },
};

// The legacy backend: the plain names lead to the x_tables binaries too, so upstream kube-proxy
// (which runs `iptables` and `iptables-restore` from PATH) uses it like ours does.
const LEGACY_BACKEND: Wrapped = {
  "iptables-restore": { real: "/usr/sbin/iptables-legacy-restore", stdinOnly: false },
  "iptables-legacy-restore": { real: "/usr/sbin/iptables-legacy-restore", stdinOnly: false },
  "ip6tables-restore": { real: "/usr/sbin/ip6tables-legacy-restore", stdinOnly: false },
  "ip6tables-legacy-restore": { real: "/usr/sbin/ip6tables-legacy-restore", stdinOnly: false },
  nft: { real: "/usr/sbin/nft", stdinOnly: true },
};
const LEGACY_LINKS: Record<string, string> = {
  iptables: "/usr/sbin/iptables-legacy",
  "iptables-save": "/usr/sbin/iptables-legacy-save",
  ip6tables: "/usr/sbin/ip6tables-legacy",
  "ip6tables-save": "/usr/sbin/ip6tables-legacy-save",
};

function wrapper(tool: string, real: string, stdinOnly: boolean, dir: string): string {
  const v6 = tool.startsWith("ip6") ? "echo 1" : `head -c 400 "$f" | grep -c "ip6 "`;
  // SY_BENCH_KEEP_WRITES=<dir>: every input is kept there (to compare what the two proxies send).
  const keep = process.env.SY_BENCH_KEEP_WRITES;
  const dispose = keep ? `mv "$f" ${keep}/${tool}.$t` : `rm -f "$f"`;
  return `#!/bin/bash
${stdinOnly ? `[[ " $* " == *" -f "* ]] || exec ${real} "$@"` : ""}
t=$EPOCHREALTIME
f=${dir}/in.$$.$RANDOM
tee "$f" | ${real} "$@"
rc=\${PIPESTATUS[1]}
e=$EPOCHREALTIME
# this shell's children's user and system time: the tool's (and tee's); a builtin, so no subshell
times > "$f.times"
( k=$(tail -1 "$f.times" | cut -d' ' -f2); rm -f "$f.times"
  printf '%s %s %s %s %s %s %s\\n' "$t" ${tool} "$(stat -c %s "$f")" "$(wc -l < "$f")" "$(${v6})" "$e" "$k" >> ${dir}/log; ${dispose} ) </dev/null >/dev/null 2>&1 &
exit $rc
`;
}

/** bash's `times` format, "1m2.345s", in ms. */
function bashTimeMs(text: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(text);
  return m ? (Number(m[1]) * 60 + Number(m[2])) * 1000 : 0;
}

const ORIGINAL_PATH = process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin";

export class KernelWriteLog {
  readonly dir: string;
  readonly binDir: string;
  #overheadMs = 0;

  constructor(backend: "nft" | "legacy" = "nft") {
    this.dir = mkdtempSync(join(tmpdir(), "sy-bench-proxier-shim-"));
    this.binDir = join(this.dir, "bin");
    mkdirSync(this.binDir);
    if (backend === "legacy") {
      for (const [tool, real] of Object.entries(LEGACY_LINKS)) symlinkSync(real, join(this.binDir, tool));
    }
    for (const [tool, { real, stdinOnly }] of Object.entries(
      backend === "legacy" ? LEGACY_BACKEND : NFT_BACKEND,
    )) {
      if (!existsSync(real)) continue;
      const path = join(this.binDir, tool);
      writeFileSync(path, wrapper(tool, real, stdinOnly, this.dir));
      chmodSync(path, 0o755);
    }
    writeFileSync(join(this.dir, "log"), "");
  }

  /**
   * PATH with these wrappers first, in front of the PATH the benchmark started with: the runs set
   * process.env.PATH, and building on it put the legacy backend's `iptables` link ahead of the host's
   * for every run after a legacy one (upstream's jump rules then went to x_tables, its restore to nft).
   */
  path(): string {
    return `${this.binDir}:${ORIGINAL_PATH}`;
  }

  /** Every call logged so far (the background logger may lag a few ms: read after a short settle). */
  writes(): KernelWrite[] {
    return readFileSync(join(this.dir, "log"), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => {
        const [at = "0", tool = "", bytes = "0", lines = "0", v6 = "0", end = at, sys = "0m0s"] =
          l.split(" ");
        return {
          at: Number(at) * 1000,
          tool,
          bytes: Number(bytes),
          lines: Number(lines),
          family: Number(v6) > 0 ? "IPv6" : "IPv4",
          ms: (Number(end) - Number(at)) * 1000,
          kernelMs: bashTimeMs(sys),
        } as const;
      });
  }

  /** IPv4 writes that started in [from, to] (ms since the epoch). */
  between(from: number, to: number): KernelWrite[] {
    return this.writes().filter((w) => w.family === "IPv4" && w.at >= from && w.at <= to);
  }

  /** What one wrapped call costs over a direct one: `nft -c -f -` with an empty script, median of 20. */
  measureOverhead(): number {
    const time = (bin: string) => {
      const t0 = performance.now();
      execFileSync(bin, ["-c", "-f", "-"], { input: "" });
      return performance.now() - t0;
    };
    const direct: number[] = [];
    const wrapped: number[] = [];
    for (let i = 0; i < 20; i++) {
      direct.push(time("/usr/sbin/nft"));
      wrapped.push(time(join(this.binDir, "nft")));
    }
    this.#overheadMs = median(wrapped) - median(direct);
    return this.#overheadMs;
  }

  get overheadMs(): number {
    return this.#overheadMs;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
