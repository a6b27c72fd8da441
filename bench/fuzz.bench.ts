// A million mutated DNS packets (bit flips, truncation, noise, pointer loops; packages/resolver/src/testing/fuzz/) at
// switchyard-dns and at CoreDNS, the same packets (same seed) and the same Corefile: does each stay up, answer
// every valid query sent after a batch of garbage, and what does its memory do. The test (fuzz.test.ts) runs
// 200k against ours; this is the long run with the anchor beside it.

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drive } from "@switchyard/resolver/testing";
import { freePort } from "@switchyard/testbed/controlplane";
import { machineLine } from "./machine.js";
import { COREDNS_BIN, cpuSeconds, peakRssMiB, type ServerKind, startServer } from "./resolver/servers.js";

const total = Number(process.argv[2] ?? 1_000_000);
const seed = Number(process.argv[3] ?? 20261202);
const dir = mkdtempSync(join(tmpdir(), "sy-bench-fuzz-"));
// Plugins both servers have, answering every name (whoami) through the cache, as a cluster's would.
const corefile = join(dir, "Corefile");
writeFileSync(corefile, ". {\n    errors\n    cache 30\n    loadbalance\n    whoami\n}\n");

interface Row {
  kind: ServerKind;
  seconds: number;
  sent: number;
  replies: number;
  lostSentinels: number;
  malformed: number;
  alive: boolean;
  cpu: number;
  rssAfterWarmMiB: number;
  peakRssMiB: number;
}

const rssMiB = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
};

async function fuzz(kind: ServerKind): Promise<Row> {
  const port = await freePort();
  const server = await startServer({ kind, corefile, dnsPort: port, log: join(dir, `${kind}.log`) });
  let rssAfterWarmMiB = 0;
  let alive = true;
  const started = performance.now();
  try {
    const r = await drive({
      port,
      total,
      seed,
      afterBatch: async (sent) => {
        if (rssAfterWarmMiB === 0 && sent >= total / 10) rssAfterWarmMiB = rssMiB(server.pid);
        if (sent % 100_000 < 100) process.stderr.write(`[bench fuzz] ${kind}: ${sent}/${total}\n`);
      },
    });
    const seconds = (performance.now() - started) / 1000;
    try {
      rssMiB(server.pid);
    } catch {
      alive = false;
    }
    return {
      kind,
      seconds,
      ...r,
      malformed: r.malformed.length,
      alive,
      cpu: cpuSeconds(server.pid),
      rssAfterWarmMiB,
      peakRssMiB: peakRssMiB(server.pid),
    };
  } finally {
    await server.stop();
  }
}

const rows = [await fuzz("coredns"), await fuzz("switchyard")];
const corednsVersion = execFileSync(COREDNS_BIN, ["-version"], { encoding: "utf8" }).split("\n")[0]?.trim();
const table = [
  `# Fuzz: ${total} mutated packets at each server (${new Date().toISOString().slice(0, 10)})`,
  "",
  `Machine: ${machineLine()}`,
  `\`npm run bench -- fuzz ${total} ${seed}\`; seed ${seed}, 75% over UDP then 25% framed over TCP, a valid sentinel query after each`,
  `batch of 100 (lost: no answer within 5 s). Corefile: errors, cache 30, loadbalance, whoami. Anchor: ${corednsVersion}.`,
  "",
  "| server | time | packets | replies | lost sentinels | undecodable replies | up at the end | CPU s | RSS after 10% | peak RSS |",
  "|---|---|---|---|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.kind === "coredns" ? "CoreDNS" : "switchyard-dns"} | ${r.seconds.toFixed(1)} s | ${r.sent} | ${r.replies} | ${r.lostSentinels} | ${r.malformed} | ${r.alive ? "yes" : "no"} | ${r.cpu.toFixed(1)} | ${r.rssAfterWarmMiB.toFixed(0)} MiB | ${r.peakRssMiB.toFixed(0)} MiB |`,
  ),
  "",
].join("\n");
console.log(table);
mkdirSync("bench/results", { recursive: true });
writeFileSync("bench/results/fuzz.md", table);
