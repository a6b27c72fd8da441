import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Progress, type ProgressSink } from "@switchyard/testbed/progress";
import { parseJunit } from "./junit.js";
import type { RunSummary } from "./report.js";

/** The issue's default: the sig-network specs a lab without a cloud provider, IPv6 or a disruption budget can run. */
export const defaultFocus = "\\[sig-network\\]";
export const defaultSkip = [
  "\\[Serial\\]",
  "\\[Disruptive\\]",
  "\\[Slow\\]",
  "\\[Flaky\\]",
  "\\[Feature:",
  "\\[FeatureGate:",
  "\\[Alpha\\]",
  "\\[Beta\\]",
  "LoadBalancer",
  "IPv6",
  "[Dd]ual[Ss]tack",
  "SCTP",
  "ESIPP",
].join("|");

export interface ConformanceRun {
  e2eTest: string;
  /** Ginkgo's CLI, which runs the suite's specs in `procs` processes at once; without it, one process. */
  ginkgo?: { path: string; procs: number };
  kubectl: string;
  kubeconfig: string;
  focus: string;
  skip: string;
  /** Where the JUnit report, the suite's log and the summary go. */
  dir: string;
  stack: string;
  runtime: string;
  out: ProgressSink;
  /** Extra e2e.test flags, after ours. */
  extra?: readonly string[];
}

/** The suite's own flags: the lab's kubeconfig, no cloud provider, no log dumps. */
function suiteArgs(r: ConformanceRun): string[] {
  return [
    `--kubeconfig=${r.kubeconfig}`,
    `--kubectl-path=${r.kubectl}`,
    "--provider=skeleton",
    `--report-dir=${r.dir}`,
    // Dumping every namespace of a failed spec takes minutes; the suite's log keeps the failure itself.
    "--dump-logs-on-failure=false",
    ...(r.extra ?? []),
  ];
}

/**
 * The command that runs the suite: e2e.test itself with ginkgo's flags as `--ginkgo.*`, or ginkgo's CLI running
 * e2e.test in several processes (the specs mostly wait on pods, so more processes than cores still pays), the same
 * focus, skip and JUnit report either way.
 */
export function e2eCommand(r: ConformanceRun): string[] {
  const ginkgo = {
    focus: r.focus,
    skip: r.skip,
    "junit-report": join(r.dir, "junit.xml"),
    timeout: "24h",
  };
  if (r.ginkgo)
    return [
      r.ginkgo.path,
      `--procs=${r.ginkgo.procs}`,
      "--no-color",
      ...Object.entries(ginkgo).map(([k, v]) => `--${k}=${v}`),
      r.e2eTest,
      "--",
      ...suiteArgs(r),
    ];
  return [
    r.e2eTest,
    ...Object.entries(ginkgo).map(([k, v]) => `--ginkgo.${k}=${v}`),
    "--ginkgo.no-color",
    ...suiteArgs(r),
  ];
}

/**
 * Runs Kubernetes' own e2e suite against the lab: progress every few seconds (specs done, from ginkgo's
 * one-character-per-spec output), the whole log in `<dir>/e2e.log`, then the specs from the JUnit report, the
 * summary written to `<dir>/summary.json`. The suite's exit code is not the verdict (it fails as soon as one spec
 * fails); the specs are.
 */
export async function runConformance(r: ConformanceRun): Promise<RunSummary> {
  mkdirSync(r.dir, { recursive: true });
  const progress = new Progress("conformance", r.out);
  const started = Date.now();
  const log = join(r.dir, "e2e.log");
  const fd = openSync(log, "w");
  let done = 0;
  let failed = 0;
  const [bin = r.e2eTest, ...args] = e2eCommand(r);
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", fd] });
  child.stdout?.on("data", (b: Buffer) => {
    const text = b.toString();
    writeFileSync(log, text, { flag: "a" });
    // Ginkgo prints one • per finished spec, on one long line among the S of skipped ones; a failure gets its own
    // `• [FAILED]` block.
    done += (text.match(/•/g) ?? []).length;
    failed += (text.match(/• \[FAILED\]/g) ?? []).length;
    progress.update(`${done} specs done${failed ? `, ${failed} failed` : ""} (log: ${log})`);
  });
  const tick = setInterval(
    () => progress.update(`${done} specs done${failed ? `, ${failed} failed` : ""}`),
    10_000,
  );
  const code = await new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (c) => resolve(c ?? 1));
  }).finally(() => {
    clearInterval(tick);
    closeSync(fd);
  });
  const junit = join(r.dir, "junit.xml");
  if (!existsSync(junit)) throw new Error(`e2e.test exited ${code} without a JUnit report; see ${log}`);
  const summary: RunSummary = {
    stack: r.stack,
    runtime: r.runtime,
    focus: r.focus,
    skip: r.skip,
    seconds: (Date.now() - started) / 1000,
    specs: parseJunit(readFileSync(junit, "utf8")),
  };
  writeFileSync(join(r.dir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  progress.done(`${summary.specs.filter((s) => s.status !== "skipped").length} specs ran`);
  return summary;
}
