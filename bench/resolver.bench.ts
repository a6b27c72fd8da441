// switchyard-dns side by side with CoreDNS v1.14.7 on one lab control plane, driven by dnsperf over UDP
// on 127.0.0.1. Both servers read the same Corefile (kubernetes + prometheus + forward, with or without
// `cache 30`) and forward to the same local upstream, a CoreDNS `template` zone. Each server runs alone,
// freshly started per workload, so peak memory and CPU belong to that workload. Both get the same CPUs
// (taskset) in two layouts, one core each and all cores (`--layout one-core|all-cores` runs one), and size
// themselves from them (`--workers N` fixes switchyard-dns's count instead of `auto`). `--quick` shortens every
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
import { GC_TRACE } from "./resolver/gc.js";
import { type Measured, measure } from "./resolver/measure.js";
import { type Layout, type LayoutResults, renderReport, type WorkloadResult } from "./resolver/report.js";
import {
  COREDNS_BIN,
  processCount,
  type RunningServer,
  rssMiB,
  type ServerKind,
  startServer,
} from "./resolver/servers.js";
import { type Workload, workloads } from "./resolver/workloads.js";

const quick = process.argv.includes("--quick");
const option = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
// switchyard-dns `-workers`: by default `auto`, which sizes itself from the CPUs it may run on as CoreDNS's
// GOMAXPROCS does; `--workers N` fixes it.
const workers = option("--workers") ?? "auto";
const cpuCount = availableParallelism();
const allLayouts: Layout[] = [
  {
    id: "one-core",
    title: "One core each: the server on CPU 0, dnsperf and the upstream on CPU 1",
    serverCpus: "0",
    clientCpus: "1",
  },
  {
    id: "all-cores",
    title: `All ${cpuCount} cores for the server, shared with dnsperf and the upstream`,
    serverCpus: `0-${cpuCount - 1}`,
  },
];
// `--layout one-core|all-cores` runs one of them; both by default.
const layouts = allLayouts.filter((l) => (option("--layout") ?? l.id) === l.id);
if (layouts.length === 0) throw new Error(`--layout: one of ${allLayouts.map((l) => l.id).join(", ")}`);
if (cpuCount < 2) throw new Error("the bench pins the server and the load to different CPUs: it needs 2");
const settings = {
  warmupSeconds: quick ? 2 : 5,
  saturatedSeconds: quick ? 6 : 25,
  fixedSeconds: quick ? 4 : 15,
  fixedRates: [2000, 10_000],
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

/** The count a server runs with: switchyard-dns's worker processes, CoreDNS's GOMAXPROCS from its GC trace. */
function parallelismOf(server: RunningServer): string {
  if (server.kind === "switchyard") {
    const processes = processCount(server.pid);
    return processes === 1 ? "1 process" : `${processes - 1} workers`;
  }
  const procs = [...readFileSync(server.log, "utf8").matchAll(/ (\d+) P$/gm)].at(-1)?.[1];
  return procs ? `GOMAXPROCS ${procs}` : "n/a";
}

/** The cache's lookups so far, summed over every series (and, for switchyard-dns workers, over the workers). */
async function cacheLookups(metricsPort: number): Promise<{ hits: number; misses: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const sum = (name: string) =>
    text
      .split("\n")
      .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
      .reduce((total, l) => total + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
  return { hits: sum("coredns_cache_hits_total"), misses: sum("coredns_cache_misses_total") };
}

/** One server on one workload and layout: started fresh, warmed up, measured saturated and at each fixed rate. */
async function runOne(
  kind: ServerKind,
  w: Workload,
  layout: Layout,
  queryFile: string,
  result: WorkloadResult,
  label: string,
): Promise<void> {
  const ports = { metrics: await freePort(), ready: await freePort() };
  const dnsPort = await freePort();
  const corefile = join(work, `Corefile.${w.id}.${kind}`);
  writeFileSync(
    corefile,
    clusterDnsCorefile({
      kubeconfigPath: cp.kubeconfigPath,
      kubeContext: KUBE_CONTEXT,
      upstreamPort: upstreamPortOf(),
      cache: w.cache,
      ports,
    }),
  );
  say(`${label}: starting on CPUs ${layout.serverCpus}`);
  const log = join(work, `${layout.id}.${w.id}.${kind}.log`);
  const server = await startServer({
    kind,
    corefile,
    dnsPort,
    readyPort: ports.ready,
    log,
    workers,
    cpus: layout.serverCpus,
    ...(kind === "switchyard" ? { nodeArgs: [...GC_TRACE.nodeArgs] } : { env: { ...GC_TRACE.env } }),
  });
  try {
    const base: Omit<DnsperfOptions, "seconds"> = {
      port: dnsPort,
      queryFile,
      outstanding: settings.outstanding,
      clients: settings.clients,
      scratch: join(work, "dnsperf.out"),
      ...(layout.clientCpus ? { cpus: layout.clientCpus } : {}),
    };
    const traced = { kind, log };
    const tick = (phase: string, total: number) => (t: number) => {
      if (Math.round(t) % 5 === 0) say(`${label}: ${phase} ${Math.round(t)}/${total} s`);
    };
    result.idleRssMiB[kind] = rssMiB(server.pid);
    // Warm-up: fills the cache, lets V8 optimise, opens the forward connections.
    await measure(server.pid, upstream?.pid, { ...base, seconds: settings.warmupSeconds });
    result.parallelism[kind] = parallelismOf(server);
    const lookupsBefore = w.cache ? await cacheLookups(ports.metrics) : undefined;
    const s = await measure(
      server.pid,
      upstream?.pid,
      { ...base, seconds: settings.saturatedSeconds, onTick: tick("saturated", settings.saturatedSeconds) },
      traced,
    );
    result.saturated[kind] = s;
    if (lookupsBefore) {
      const after = await cacheLookups(ports.metrics);
      const hits = after.hits - lookupsBefore.hits;
      const misses = after.misses - lookupsBefore.misses;
      result.hitRate[kind] = hits + misses > 0 ? hits / (hits + misses) : Number.NaN;
    }
    say(
      `${label}: ${Math.round(s.qps)} qps, p99 ${(s.p99 * 1000).toFixed(2)} ms, ${s.serverCores.toFixed(2)} cores, ` +
        `${((s.serverCores * s.seconds * 1e6) / s.completed).toFixed(1)} µs/query, others ${s.otherCores.toFixed(2)} cores`,
    );
    for (const rate of settings.fixedRates) {
      const f = await measure(
        server.pid,
        upstream?.pid,
        { ...base, seconds: settings.fixedSeconds, maxQps: rate },
        traced,
      );
      const byKind = result.fixedRates.get(rate) ?? ({} as Record<ServerKind, Measured>);
      byKind[kind] = f;
      result.fixedRates.set(rate, byKind);
      say(
        `${label}: at ${rate} qps p99 ${(f.p99 * 1000).toFixed(2)} ms, p99.9 ${(f.p999 * 1000).toFixed(2)} ms`,
      );
    }
  } finally {
    await server.stop();
  }
}

const cp = await startControlPlane();
let upstream: RunningServer | undefined;
let upstreamPort = 0;
const upstreamPortOf = () => upstreamPort;
const byLayout: LayoutResults[] = [];
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

  upstreamPort = await freePort();
  writeFileSync(join(work, "Corefile.upstream"), upstreamCorefile());
  // One core for the upstream, the last, so it does not compete with the server under test more than it must.
  upstream = await startServer({
    kind: "coredns",
    corefile: join(work, "Corefile.upstream"),
    dnsPort: upstreamPort,
    log: join(work, "upstream.log"),
    cpus: String(cpuCount - 1),
  });
  say(`upstream (CoreDNS template, on CPU ${cpuCount - 1}) on 127.0.0.1:${upstreamPort}`);

  const all = workloads(names);
  for (const layout of layouts) {
    const results: WorkloadResult[] = [];
    byLayout.push({ layout, results });
    for (const [wi, w] of all.entries()) {
      const queryFile = join(work, `${w.id}.queries`);
      writeFileSync(queryFile, `${w.queries.join("\n")}\n`);
      const result: WorkloadResult = {
        workload: w,
        saturated: {} as WorkloadResult["saturated"],
        fixedRates: new Map(),
        idleRssMiB: {} as WorkloadResult["idleRssMiB"],
        parallelism: {} as WorkloadResult["parallelism"],
        hitRate: {},
      };
      for (const kind of ["coredns", "switchyard"] as const) {
        const label = `${layout.id} [${wi + 1}/${all.length}] ${w.id} ${kind}`;
        await runOne(kind, w, layout, queryFile, result, label);
      }
      results.push(result);
    }
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
    `${settings.warmupSeconds} s warm-up, then ${settings.saturatedSeconds} s saturated and ${settings.fixedSeconds} s at each fixed rate ` +
    `(${settings.fixedRates.join(" and ")} qps, -Q). Percentiles come from dnsperf's per-query \`-v\` lines (2.10 prints only average and stddev).`,
  "- Both servers run with the same CPUs (taskset) and size themselves from them: CoreDNS's Go runtime sets GOMAXPROCS " +
    `to the CPUs it may use, and switchyard-dns runs \`-workers ${workers}\`${workers === "auto" ? ", one worker process per CPU it may use (one process, no workers, on one CPU)" : ""}. ` +
    "Each worker has its own informers and cache and shares the DNS, ready and metrics sockets through node:cluster.",
  "- One core each: the server alone on CPU 0, dnsperf and the upstream on CPU 1, so the server's CPU is its own. " +
    "All cores: the server may use every CPU, and dnsperf (and in the forwarded workload the upstream) compete with it.",
  "- Every server is started fresh for each workload and runs alone (never both at once); peak RSS is VmHWM over its whole life " +
    "(startup, informer sync, warm-up, every run), summed over its processes. CPU is user+system from /proc/<pid>/stat over the " +
    "measured run, in cores, summed over its processes.",
  "- GC pauses come from each server's own trace during the run: switchyard-dns under `node --trace-gc` (each collection's " +
    "main-thread pause), CoreDNS under `GODEBUG=gctrace=1` (the two stop-the-world phases of each cycle). Incremental " +
    "marking steps and Go's concurrent mark run beside the program and are not counted.",
  "- `others' CPU` is the machine's busy time (/proc/stat) minus the server, the upstream and dnsperf: other agents' work " +
    `sharing these ${cpuCount} cores, plus the lab kube-apiserver and etcd. Non-zero means the numbers are contended.`,
  "- In the saturated runs the client is closed-loop, so latency is mostly queueing: p50 ≈ outstanding / qps. " +
    "The fixed-rate tables compare latency below saturation; a p99 or p99.9 there follows GC pauses and how long the " +
    "machine's scheduler kept the server (or dnsperf) off a core, so it is only meaningful when others' CPU is near zero.",
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
    quick,
    command: `npm run bench -- resolver ${process.argv.slice(2).join(" ")}`.trim(),
  },
  byLayout,
  notes,
);
console.log(report);
// A quick run is a smoke test: its file goes to the git-ignored raw folder, not over the real results.
const target = quick ? "bench/results/raw/resolver-quick.md" : "bench/results/resolver.md";
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, report);
say(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
