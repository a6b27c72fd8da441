import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";

/** One line saying what the numbers were measured on; every result file starts with it. */
export function machineLine(): string {
  const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
  const go = (() => {
    try {
      return execFileSync("go", ["version"], { encoding: "utf8" })
        .trim()
        .replace(/^go version /, "");
    } catch {
      return "no go";
    }
  })();
  const memGiB = Math.round(totalmem() / 2 ** 30);
  return `${cpus().length} cores (${cpu}), ${memGiB} GiB, Linux ${process.platform === "linux" ? execFileSync("uname", ["-r"], { encoding: "utf8" }).trim() : process.platform}, Node ${process.version}, ${go}`;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}
