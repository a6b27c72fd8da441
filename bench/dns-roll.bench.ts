// Lookups lost per roll of the DNS Deployment: the lab's lameduck scenario (lab/src/scenarios/lameduck/lameduck.ts)
// run for many consecutive rolls on a netns lab of its own, lameduck 0s (the contrast: the pod exits at SIGTERM) and
// 5s (the setting that should lose nothing), with `conntrack -E` recorded on every node so each lost lookup is shown
// with the conntrack entry it met. Not a CI test: a rare loss needs many rolls to show, and they take ~20 s each.
// Writes bench/results/dns-roll.md.
//
//   npm run bench -- dns-roll [--rolls 20] [--lameducks 0s,5s] [--mode iptables|nftables] [--keep-trace DIR]
//
// Needs root, the apps built (npx turbo run build) and the upstream binaries (switchyard-lab upstream build).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { labDown, labUp, type ProxyMode, realExec } from "@switchyard/lab/netns";
import { formatScenarioReport, scenarioByName } from "@switchyard/lab/scenarios";
import { freeControlPlanePorts } from "@switchyard/testbed/controlplane";
import { machineLine } from "./machine.js";

const argv = process.argv.slice(2);
const opt = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const rolls = Number(opt("--rolls") ?? 20);
const lameducks = opt("--lameducks") ?? "0s,5s";
const mode = (opt("--mode") ?? "iptables") as ProxyMode;
const keepTrace = opt("--keep-trace");

// Its own prefix and networks, apart from the e2e tests' labs and the default one.
const lab = { prefix: "dnrb", nodes: 3, zones: 2, nodeCidr: "198.18.52.0/24", clusterCidr: "10.236.0.0/16" };

/** Per measured roll, from the report's table: setting, failed, attempted. */
export function rollRows(
  lines: readonly string[],
): { lameduck: string; failed: number; attempted: number }[] {
  return lines
    .map((l) => /^(\d+m?s) +(\d+)\/(\d+) /.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ lameduck: m[1] ?? "", failed: Number(m[2]), attempted: Number(m[3]) }));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-dns-roll-"));
  const trace = keepTrace ?? join(dir, "trace");
  mkdirSync(trace, { recursive: true });
  const started = new Date();
  const load = loadavg()[0]?.toFixed(1);
  try {
    await labUp({
      stateDir: dir,
      lab,
      ports: await freeControlPlanePorts(),
      detached: false,
      stack: mode,
      readyTimeoutMs: 300_000,
      out: process.stderr,
    });
    const report = await scenarioByName("lameduck").run({
      stateDir: dir,
      params: new Map([
        ["lameducks", lameducks],
        ["rolls", String(rolls)],
        ["settle", "2"],
        ["trace", trace],
      ]),
      out: process.stderr,
      exec: realExec,
    });
    const text = formatScenarioReport(report);
    const rows = rollRows(report.lines);
    const settings = [...new Set(rows.map((r) => r.lameduck))];
    const table = [
      "| lameduck | rolls | failed lookups per roll | total |",
      "|---|---|---|---|",
      ...settings.map((s) => {
        const mine = rows.filter((r) => r.lameduck === s);
        const failed = mine.reduce((n, r) => n + r.failed, 0);
        const attempted = mine.reduce((n, r) => n + r.attempted, 0);
        return `| ${s} | ${mine.length} | ${mine.map((r) => r.failed).join(", ")} | ${failed}/${attempted} |`;
      }),
    ];
    const out = [
      "# DNS roll: lookups lost per roll of the DNS Deployment",
      "",
      `${machineLine()}; load average ${load} at the start`,
      "",
      `\`npm run bench -- dns-roll --rolls ${rolls} --lameducks ${lameducks} --mode ${mode}\`, ${started.toISOString()}: a 3-node netns lab,`,
      "kube-proxy (ours) in the given mode, ~40 lookups/s per node, each from a socket of its own; 2 DNS pods rolled by",
      "`kubectl rollout restart`'s annotation, each roll counted from its start until its old pods are gone plus 2 s.",
      "",
      ...table,
      "",
      "The scenario's report, with each failed lookup's conntrack events (seconds from its sending):",
      "",
      "```",
      text.trimEnd(),
      "```",
      "",
    ].join("\n");
    console.log(out);
    const file = join(import.meta.dirname, "results", "dns-roll.md");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, out);
  } finally {
    await labDown(dir).catch((e: Error) => console.error(`lab down: ${e.message}`));
    if (!keepTrace) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
