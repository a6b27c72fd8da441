// Hostile DNS-over-TCP clients at switchyard-dns and at CoreDNS, one server at a time on the same Corefile
// (issue 32): (1) one connection pipelines --queries queries and never reads a reply: the server's RSS
// growth, how many queries the client got to write, whether the server closed the connection, and how fast
// another client is answered meanwhile; (2) --slow clients each send a query one byte a second (connecting
// again a second after they are closed): the latency of normal TCP queries, each on a new connection, asked
// meanwhile. The fault test (apps/cluster-dns/test/hostile-tcp.diff.test.ts) asserts the bounds; this prints
// the figures at full size. Writes bench/results/resolver-hostile-tcp.md.
//
//   npm run bench -- resolver-hostile-tcp [--queries 1000000] [--slow 1200] [--budget 40]
//                                         [--switchyard LABEL=BIN,...]
//
// `--switchyard` adds other switchyard-dns builds (e.g. main=/path/to/main/apps/cluster-dns/bin/switchyard-dns.js)
// beside the checkout's. --budget is how long (s) the pipelining client keeps its connection at most.

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  openFileLimit,
  pipelineWithoutReading,
  rssBytes,
  samplePeakRss,
  slowClients,
  tcpQueryOnce,
} from "@switchyard/cluster-dns/testing";
import { freePort } from "@switchyard/testbed/controlplane";
import { machineLine, median, percentile } from "./machine.js";
import { COREDNS_BIN, type ServerKind, startServer } from "./resolver/servers.js";

const argv = process.argv.slice(2);
const opt = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const queries = Number(opt("--queries") ?? 1_000_000);
const slow = Number(opt("--slow") ?? 1200);
const budgetMs = Number(opt("--budget") ?? 40) * 1000;
const NORMAL_QUERIES = 20;
const MiB = 1024 * 1024;

interface Target {
  kind: ServerKind;
  label: string;
  bin?: string;
}
const targets: Target[] = [
  { kind: "coredns", label: "CoreDNS" },
  { kind: "switchyard", label: "switchyard-dns" },
  ...(opt("--switchyard") ?? "")
    .split(",")
    .filter((b) => b !== "")
    .map((b): Target => {
      const [label, bin] = b.split("=", 2) as [string, string];
      return { kind: "switchyard", label, bin };
    }),
];

const dir = mkdtempSync(join(tmpdir(), "sy-bench-hostile-"));
const corefile = join(dir, "Corefile");
writeFileSync(
  corefile,
  ". {\n    hosts {\n        10.0.0.1 a.example.org\n        fallthrough\n    }\n    whoami\n}\n",
);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withServer<T>(t: Target, run: (port: number, pid: number) => Promise<T>): Promise<T> {
  const port = await freePort();
  const server = await startServer({
    kind: t.kind,
    corefile,
    dnsPort: port,
    log: join(dir, `${t.label}.log`),
    ...(t.bin ? { bin: t.bin } : {}),
  });
  try {
    // Warm: the first queries load code paths; the baseline is taken after them.
    for (let id = 1; id <= 20; id++) await tcpQueryOnce(port, "127.0.0.1", id, "a.example.org", 5000);
    await sleep(500);
    return await run(port, server.pid);
  } finally {
    await server.stop();
  }
}

async function pipelining(t: Target) {
  return withServer(t, async (port, pid) => {
    const before = rssBytes(pid);
    const peak = samplePeakRss(pid);
    const attack = pipelineWithoutReading(port, "127.0.0.1", queries, budgetMs);
    await sleep(2000);
    const other = await tcpQueryOnce(port, "127.0.0.1", 4242, "a.example.org", 5000);
    const r = await attack;
    return { ...r, other, growthMiB: (peak.stop() - before) / MiB };
  });
}

async function slowLoris(t: Target) {
  return withServer(t, async (port) => {
    const clients = slowClients(port, "127.0.0.1", slow);
    try {
      await sleep(3000);
      const open = clients.open();
      const ms: (number | undefined)[] = [];
      for (let id = 1; id <= NORMAL_QUERIES; id++) {
        ms.push(await tcpQueryOnce(port, "127.0.0.1", id, "a.example.org", 5000));
        await sleep(250);
      }
      const answered = ms.filter((m): m is number => m !== undefined);
      return { open, answered: answered.length, median: median(answered), p95: percentile(answered, 95) };
    } finally {
      clients.stop();
    }
  });
}

if (openFileLimit() < slow + 200) throw new Error(`ulimit -n must allow ${slow + 200} open files`);
const rows: string[] = [];
for (const t of targets) {
  process.stderr.write(`[bench hostile-tcp] ${t.label}: pipelining\n`);
  const p = await pipelining(t);
  process.stderr.write(`[bench hostile-tcp] ${t.label}: ${slow} slow clients\n`);
  const s = await slowLoris(t);
  const ms = (v: number | undefined) => (v === undefined ? "none" : `${v.toFixed(1)} ms`);
  rows.push(
    `| ${t.label} | +${p.growthMiB.toFixed(1)} MiB | ${p.written} | ${p.closedByServer ? `closed after ${(p.ms / 1000).toFixed(1)} s` : `open after ${(p.ms / 1000).toFixed(0)} s`} | ${ms(p.other)} | ${s.open} | ${s.answered}/${NORMAL_QUERIES} | ${s.answered ? ms(s.median) : "-"} | ${s.answered ? ms(s.p95) : "-"} |`,
  );
}
rmSync(dir, { recursive: true, force: true });

const corednsVersion = execFileSync(COREDNS_BIN, ["-version"], { encoding: "utf8" }).split("\n")[0]?.trim();
const table = [
  `# Hostile TCP clients at each server (${new Date().toISOString().slice(0, 10)})`,
  "",
  `Machine: ${machineLine()}`,
  `\`npm run bench -- resolver-hostile-tcp ${argv.join(" ")}\`; Corefile: hosts, whoami; one server at a time. Anchor: ${corednsVersion}.`,
  `Pipelining: one connection writes up to ${queries} queries (as fast as the connection takes them) and never reads;`,
  "RSS growth is the peak over the baseline after warm-up; another client asks once, 2 s in. Slow clients:",
  `${slow} connections each send a query a byte a second, connecting again 1 s after being closed; after 3 s,`,
  `${NORMAL_QUERIES} normal queries, each on a new connection, 250 ms apart (5 s timeout).`,
  "",
  "| server | pipelining: RSS growth | queries written | connection | other client | slow clients open | normal answered | median | p95 |",
  "|---|---|---|---|---|---|---|---|---|",
  ...rows,
  "",
].join("\n");
console.log(table);
mkdirSync("bench/results", { recursive: true });
writeFileSync("bench/results/resolver-hostile-tcp.md", table);
