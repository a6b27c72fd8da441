// switchyard-dns side by side with CoreDNS v1.14.7 on one lab control plane, driven by dnsperf over UDP
// on 127.0.0.1. Both servers read the same Corefile (kubernetes + prometheus + forward, with or without
// `cache 30`) and forward to the same local upstream, a CoreDNS `template` zone. Each server runs alone,
// freshly started per workload, so peak memory and CPU belong to that workload. `--quick` shortens every
// run and the cluster. Writes bench/results/resolver.md.

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startControlPlane } from "@switchyard/testbed";
import { freePort } from "@switchyard/testbed/controlplane";
import { readVersions } from "@switchyard/testbed/upstream";
import { machineLine } from "./machine.js";
import { type ClusterShape, populate } from "./resolver/cluster.js";
import { clusterDnsCorefile, upstreamCorefile } from "./resolver/corefiles.js";
import type { DnsperfOptions } from "./resolver/dnsperf.js";
import { type Measured, measure } from "./resolver/measure.js";
import { renderReport, type WorkloadResult } from "./resolver/report.js";
import { COREDNS_BIN, type RunningServer, rssMiB, type ServerKind, startServer } from "./resolver/servers.js";
import { workloads } from "./resolver/workloads.js";

const quick = process.argv.includes("--quick");
// switchyard-dns processes: `--workers N|auto`. The default is the server's own (1), which its manifests deploy:
// one Node process against CoreDNS on every core. `auto` forks one worker per core.
const workersArg = process.argv.indexOf("--workers");
const workers = workersArg >= 0 ? (process.argv[workersArg + 1] ?? "auto") : "1";
const settings = {
  warmupSeconds: quick ? 2 : 5,
  saturatedSeconds: quick ? 6 : 25,
  fixedSeconds: quick ? 4 : 15,
  fixedQps: 2000,
  outstanding: 200,
  clients: 16,
};
const shape: ClusterShape = quick
  ? { namespaces: 4, clusterIpPerNamespace: 20, headlessPerNamespace: 5, endpointsPerHeadless: 3 }
  : { namespaces: 10, clusterIpPerNamespace: 30, headlessPerNamespace: 6, endpointsPerHeadless: 3 };
const KUBE_CONTEXT = "kubernetes-admin@switchyard-lab";

const corednsVersion = execFileSync(COREDNS_BIN, ["-version"], { encoding: "utf8" }).split("\n")[0]?.trim();
const switchyardVersion = execFileSync(
  process.execPath,
  ["apps/cluster-dns/bin/switchyard-dns.js", "-version"],
  {
    encoding: "utf8",
  },
)
  .split("\n")[0]
  ?.trim();

const started = performance.now();
const say = (line: string) =>
  process.stderr.write(`[bench resolver +${((performance.now() - started) / 1000).toFixed(0)}s] ${line}\n`);

const work = mkdtempSync(join(tmpdir(), "sy-bench-dns-"));
const loadBefore = loadavg()
  .map((l) => l.toFixed(2))
  .join(", ");
say(`scratch ${work}; load average ${loadBefore}`);

const cp = await startControlPlane();
let upstream: RunningServer | undefined;
const results: WorkloadResult[] = [];
let clusterLine = "";
let corefileExample = "";
try {
  say("control plane up; creating Services and EndpointSlices");
  const names = await populate(cp.kubeconfigPath, shape);
  clusterLine =
    `Cluster: ${names.clusterIp.length} ClusterIP Services and ${names.headless.length} headless Services ` +
    `(EndpointSlices of ${shape.endpointsPerHeadless} ready endpoints each) in ${names.namespaces.length} namespaces, ` +
    `written through the API of a lab kube-apiserver (no controllers).`;
  say(clusterLine);

  const upstreamPort = await freePort();
  writeFileSync(join(work, "Corefile.upstream"), upstreamCorefile());
  // One core for the upstream, so it does not compete with the server under test more than it must.
  upstream = await startServer({
    kind: "coredns",
    corefile: join(work, "Corefile.upstream"),
    dnsPort: upstreamPort,
    log: join(work, "upstream.log"),
    env: { GOMAXPROCS: "1" },
  });
  say(`upstream (CoreDNS template, GOMAXPROCS=1) on 127.0.0.1:${upstreamPort}`);

  const all = workloads(names);
  for (const [wi, w] of all.entries()) {
    const queryFile = join(work, `${w.id}.queries`);
    writeFileSync(queryFile, `${w.queries.join("\n")}\n`);
    const saturated = {} as Record<ServerKind, Measured>;
    const fixedRate = {} as Record<ServerKind, Measured>;
    const idleRssMiB = {} as Record<ServerKind, number>;
    for (const kind of ["coredns", "switchyard"] as const) {
      const ports = { metrics: await freePort(), ready: await freePort() };
      const dnsPort = await freePort();
      const corefile = join(work, `Corefile.${w.id}.${kind}`);
      writeFileSync(
        corefile,
        clusterDnsCorefile({
          kubeconfigPath: cp.kubeconfigPath,
          kubeContext: KUBE_CONTEXT,
          upstreamPort,
          cache: w.cache,
          ports,
        }),
      );
      const label = `[${wi + 1}/${all.length}] ${w.id} ${kind}`;
      say(`${label}: starting`);
      const server = await startServer({
        kind,
        corefile,
        dnsPort,
        readyPort: ports.ready,
        log: join(work, `${w.id}.${kind}.log`),
        workers,
      });
      try {
        const base: Omit<DnsperfOptions, "seconds"> = {
          port: dnsPort,
          queryFile,
          outstanding: settings.outstanding,
          clients: settings.clients,
          scratch: join(work, "dnsperf.out"),
        };
        const tick = (phase: string, total: number) => (t: number) => {
          if (Math.round(t) % 5 === 0) say(`${label}: ${phase} ${Math.round(t)}/${total} s`);
        };
        idleRssMiB[kind] = rssMiB(server.pid);
        // Warm-up: fills the cache, lets V8 optimise, opens the forward connections.
        await measure(server.pid, upstream.pid, { ...base, seconds: settings.warmupSeconds });
        saturated[kind] = await measure(server.pid, upstream.pid, {
          ...base,
          seconds: settings.saturatedSeconds,
          onTick: tick("saturated", settings.saturatedSeconds),
        });
        const s = saturated[kind];
        say(
          `${label}: ${Math.round(s.qps)} qps, p50 ${(s.p50 * 1000).toFixed(2)} ms, p99 ${(s.p99 * 1000).toFixed(2)} ms, ` +
            `${s.serverCores.toFixed(2)} cores, others ${s.otherCores.toFixed(2)} cores`,
        );
        fixedRate[kind] = await measure(server.pid, upstream.pid, {
          ...base,
          seconds: settings.fixedSeconds,
          maxQps: settings.fixedQps,
        });
        const f = fixedRate[kind];
        say(
          `${label}: at ${settings.fixedQps} qps p50 ${(f.p50 * 1000).toFixed(2)} ms, p99 ${(f.p99 * 1000).toFixed(2)} ms`,
        );
      } finally {
        await server.stop();
      }
    }
    results.push({ workload: w, saturated, fixedRate, idleRssMiB });
  }
  corefileExample = readFileSync(join(work, "Corefile.cached.switchyard"), "utf8")
    .replace(/kubeconfig \S+/, "kubeconfig <lab admin.kubeconfig>")
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>");
} finally {
  await upstream?.stop();
  await cp.stop();
  rmSync(work, { recursive: true, force: true });
}

const notes = [
  "## How it was measured",
  "",
  "- dnsperf 2.10 over UDP to 127.0.0.1, closed loop: " +
    `${settings.clients} clients, at most ${settings.outstanding} queries outstanding, ` +
    `${settings.warmupSeconds} s warm-up, then ${settings.saturatedSeconds} s saturated and ${settings.fixedSeconds} s at a fixed ${settings.fixedQps} qps (-Q). ` +
    "Percentiles come from dnsperf's per-query `-v` lines (2.10 prints only average and stddev).",
  "- Every server is started fresh for each workload and runs alone (never both at once); peak RSS is VmHWM over its whole life " +
    "(startup, informer sync, warm-up, both runs). CPU is user+system from /proc/<pid>/stat over the measured run, in cores.",
  "- `others' CPU` is the machine's busy time (/proc/stat) minus the server, the upstream and dnsperf: other agents' work " +
    "sharing these 2 cores, plus the lab kube-apiserver and etcd. Non-zero means the numbers are contended.",
  "- In the saturated runs the client is closed-loop, so latency is mostly queueing: p50 ≈ outstanding / qps. " +
    "The fixed-rate table compares latency below saturation; its p50 is the server's own time, while its p99 and " +
    "p99.9 follow how long the machine's scheduler kept the server (or dnsperf) off a core, so they are only " +
    "meaningful when others' CPU is near zero.",
  workers === "1"
    ? "- switchyard-dns ran as one process (`-workers 1`, its default and what apps/cluster-dns/deploy runs), so on " +
      "one core at most; CoreDNS ran with GOMAXPROCS unset (both cores)."
    : `- switchyard-dns ran with \`-workers ${workers}\` (${workers === "auto" ? `${availableParallelism()} worker processes, one per core` : `${workers} worker processes`}; ` +
      "each has its own informers and cache, and shares the DNS, ready and metrics sockets through node:cluster); " +
      "CoreDNS ran with GOMAXPROCS unset (both cores). Server CPU and peak RSS are summed over the primary and its " +
      "workers (the sum of per-process peaks, an upper bound).",
  "- dnsperf itself needs CPU on the same 2 cores; so does the upstream in the forwarded workload.",
  "",
  "Corefile (cache variant; the no-cache variant drops `cache 30`; the DNS port is given with `-dns.port`):",
  "",
  "```",
  corefileExample.trimEnd(),
  "```",
];
const report = renderReport(
  {
    date: new Date().toISOString().slice(0, 10),
    machine: machineLine(),
    loadBefore,
    versions:
      `Kubernetes ${readVersions().kubernetes} (lab control plane); ${corednsVersion}; ` +
      `switchyard-dns ${switchyardVersion} (apps/cluster-dns, compiled dist) on Node ${process.version}; dnsperf 2.10.`,
    cluster: clusterLine,
    fixedQps: settings.fixedQps,
    quick,
  },
  results,
  notes,
);
console.log(report);
// A quick run is a smoke test: its file goes to the git-ignored raw folder, not over the real results.
const target = quick ? "bench/results/raw/resolver-quick.md" : "bench/results/resolver.md";
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, report);
say(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
