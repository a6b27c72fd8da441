// Peak memory of switchyard-dns (one process, the default `-workers 1`) and CoreDNS v1.14.7 under kubeadm
// v1.37.2's Corefile, on a lab control plane with 1000 Services, under a long dnsperf load. Each server runs
// alone in a memory cgroup of its own (cgroup v1), once with kubeadm's 170Mi limit and once without a limit,
// and its peaks are read from /proc and from the cgroup. switchyard-dns also reports its heap from inside
// (bench/resolver/memory-probe.mjs). Writes bench/results/resolver-memory.md (resolver-memory-in-cluster.md
// with --in-cluster).
//
//   npm run bench -- resolver-memory [--seconds 60] [--limits 170,0] [--node-args "--flag ..."]
//                                    [--heap-snapshot] [--only switchyard|coredns] [--external N]
//                                    [--switchyard LABEL=BIN,...] [--quick] [--in-cluster]
//
// `--switchyard` runs several switchyard-dns builds in the same run as CoreDNS (e.g. the checkout and a copy
// of an older one), each labelled in the table; by default only the checkout's
// apps/cluster-dns/bin/switchyard-dns.js.

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { applyManifests, readManifests } from "@switchyard/lab/testing";
import { Api, serviceAccountFolder, serviceAccountToken, startControlPlane } from "@switchyard/testbed";
import { freePort } from "@switchyard/testbed/controlplane";
import { readVersions } from "@switchyard/testbed/upstream";
import { machineLine } from "./machine.js";
import { type ClusterShape, populate } from "./resolver/cluster.js";
import { kubeadmCorefile, upstreamCorefile } from "./resolver/corefiles.js";
import { type Measured, measure } from "./resolver/measure.js";
import {
  type MemoryPeaks,
  makeCgroup,
  type ProbeSummary,
  readProbe,
  removeCgroup,
  sampleMemory,
} from "./resolver/memory.js";
import { COREDNS_BIN, type RunningServer, type ServerKind, startServer } from "./resolver/servers.js";
import { kubeadmMix } from "./resolver/workloads.js";

const argv = process.argv.slice(2);
const opt = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = argv.includes("--quick");
const seconds = Number(opt("--seconds") ?? (quick ? 10 : 60));
const limits = (opt("--limits") ?? "170,0").split(",").map(Number);
const nodeArgs = (opt("--node-args") ?? "").split(" ").filter((a) => a !== "");
const heapSnapshot = argv.includes("--heap-snapshot");
// Each server on a ServiceAccount token with the shipped RBAC, mounted where a pod has it, and no
// `kubeconfig` line: the configuration a DNS pod really runs with (see servers.ts).
const inCluster = argv.includes("--in-cluster");
const only = opt("--only") as ServerKind | undefined;
interface Server {
  kind: ServerKind;
  /** The switchyard-dns build's label and entry script. */
  label?: string;
  bin?: string;
}
const CHECKOUT_BIN = "apps/cluster-dns/bin/switchyard-dns.js";
const builds: Server[] = (opt("--switchyard") ?? "")
  .split(",")
  .filter((b) => b !== "")
  .map((b) => {
    const [label, bin] = b.includes("=") ? (b.split("=", 2) as [string, string]) : [b, b];
    return { kind: "switchyard", label, bin };
  });
const servers: Server[] = [
  ...(only === "switchyard" ? [] : [{ kind: "coredns" as const }]),
  ...(only === "coredns"
    ? []
    : builds.length
      ? builds
      : [{ kind: "switchyard" as const, bin: CHECKOUT_BIN }]),
];
// Outside names: each adds three search-path NXDOMAINs in cluster.local. With 1000 the distinct questions
// for cluster.local (about 7400) fit the kubernetes plugin's reply memo (10000); see the report.
const settings = {
  warmupSeconds: quick ? 2 : 5,
  outstanding: 200,
  clients: 16,
  externalNames: Number(opt("--external") ?? 1000),
};
// 20 namespaces x (40 ClusterIP + 10 headless) = 1000 Services.
const shape: ClusterShape = quick
  ? { namespaces: 4, clusterIpPerNamespace: 20, headlessPerNamespace: 5, endpointsPerHeadless: 3 }
  : { namespaces: 20, clusterIpPerNamespace: 40, headlessPerNamespace: 10, endpointsPerHeadless: 3 };
const KUBE_CONTEXT = "kubernetes-admin@switchyard-lab";
const MiB = 1024 * 1024;

const corednsVersion = execFileSync(COREDNS_BIN, ["-version"], { encoding: "utf8" }).split("\n")[0]?.trim();
const switchyardVersion = execFileSync(process.execPath, [CHECKOUT_BIN, "-version"], {
  encoding: "utf8",
})
  .split("\n")[0]
  ?.trim();

const started = performance.now();
const say = (line: string) =>
  process.stderr.write(
    `[bench resolver-memory +${((performance.now() - started) / 1000).toFixed(0)}s] ${line}\n`,
  );

interface Run {
  kind: ServerKind;
  build?: string;
  limitMiB: number;
  measured: Measured;
  peaks: MemoryPeaks;
  probe?: ProbeSummary;
  /** The server was gone (OOM-killed or crashed) when the load ended. */
  died: boolean;
}

const work = mkdtempSync(join(tmpdir(), "sy-bench-dnsmem-"));
const loadBefore = loadavg()
  .map((l) => l.toFixed(2))
  .join(", ");
say(`scratch ${work}; load average ${loadBefore}`);

const cp = await startControlPlane();
let upstream: RunningServer | undefined;
const runs: Run[] = [];
let clusterLine = "";
let loadAfter = "";
try {
  say("control plane up; creating Services and EndpointSlices");
  const names = await populate(cp.kubeconfigPath, shape);
  clusterLine =
    `${names.clusterIp.length + names.headless.length} Services (${names.clusterIp.length} ClusterIP, ` +
    `${names.headless.length} headless with EndpointSlices of ${shape.endpointsPerHeadless} ready endpoints) ` +
    `in ${names.namespaces.length} namespaces, written through the API of a lab kube-apiserver (no controllers).`;
  say(clusterLine);
  const queryFile = join(work, "kubeadm-mix.queries");
  const queries = kubeadmMix(names, settings.externalNames);
  writeFileSync(queryFile, `${queries.join("\n")}\n`);

  const pod = inCluster ? await podCredentials() : undefined;
  const upstreamPort = await freePort();
  writeFileSync(join(work, "Corefile.upstream"), upstreamCorefile());
  upstream = await startServer({
    kind: "coredns",
    corefile: join(work, "Corefile.upstream"),
    dnsPort: upstreamPort,
    log: join(work, "upstream.log"),
    env: { GOMAXPROCS: "1" },
  });
  say(`upstream (CoreDNS template, GOMAXPROCS=1) on 127.0.0.1:${upstreamPort}`);

  for (const limitMiB of limits) {
    for (const { kind, label: build, bin } of servers) {
      const name = build ? `${kind}-${build}` : kind;
      const ports = {
        dns: await freePort(),
        health: await freePort(),
        ready: await freePort(),
        metrics: await freePort(),
      };
      const corefile = join(work, `Corefile.${name}`);
      writeFileSync(
        corefile,
        kubeadmCorefile({
          ...(pod ? {} : { kubeconfigPath: cp.kubeconfigPath }),
          kubeContext: KUBE_CONTEXT,
          upstreamPort,
          ports,
        }),
      );
      const limitBytes = limitMiB > 0 ? limitMiB * MiB : undefined;
      const cgroup = makeCgroup(`${name}-${limitMiB}`, limitBytes);
      const probeFile = join(work, `probe.${name}.${limitMiB}.jsonl`);
      const label = `${name} ${limitMiB > 0 ? `limit ${limitMiB}Mi` : "no limit"}`;
      say(`${label}: starting${cgroup ? ` in ${cgroup}` : " (no cgroup v1 memory controller: /proc only)"}`);
      const server = await startServer({
        kind,
        corefile,
        dnsPort: ports.dns,
        readyPort: ports.ready,
        log: join(work, `${name}.${limitMiB}.log`),
        ...(cgroup ? { cgroup } : {}),
        ...(pod ? { serviceAccount: pod.folder } : {}),
        ...(kind === "switchyard"
          ? {
              ...(bin ? { bin } : {}),
              nodeArgs: [
                ...nodeArgs,
                ...(heapSnapshot ? [`--heapsnapshot-signal=SIGUSR2`, `--diagnostic-dir=${work}`] : []),
                "--import",
                "./bench/resolver/memory-probe.mjs",
              ],
              env: { SWITCHYARD_BENCH_PROBE: probeFile, ...pod?.env },
            }
          : pod
            ? { env: pod.env }
            : {}),
      });
      const sampler = sampleMemory(server.pid, cgroup, limitBytes);
      let died = false;
      try {
        const base = {
          port: ports.dns,
          queryFile,
          outstanding: settings.outstanding,
          clients: settings.clients,
          scratch: join(work, "dnsperf.out"),
        };
        await measure(server.pid, upstream.pid, { ...base, seconds: settings.warmupSeconds });
        const measured = await measure(server.pid, upstream.pid, {
          ...base,
          seconds,
          onTick: (t) => {
            if (Math.round(t) % 10 === 0) say(`${label}: ${Math.round(t)}/${seconds} s`);
          },
        });
        died = !processAlive(server.pid);
        const peaks = sampler.stop();
        // The probe keeps sampling while a heap snapshot is written; only the load counts.
        const loadEnded = Date.now();
        if (heapSnapshot && kind === "switchyard" && !died) {
          // Writing a snapshot takes a few times the heap: lift the limit first (the peaks are read).
          if (cgroup) writeFileSync(join(cgroup, "memory.limit_in_bytes"), "-1");
          await snapshot(server.pid, `${name}-${limitMiB}`);
        }
        const probe = kind === "switchyard" ? readProbe(probeFile, loadEnded) : undefined;
        runs.push({
          kind,
          ...(build ? { build } : {}),
          limitMiB,
          measured,
          peaks,
          ...(probe ? { probe } : {}),
          died,
        });
        say(
          `${label}: ${Math.round(measured.qps)} qps, VmHWM ${peaks.vmHwm.toFixed(0)} MiB` +
            (peaks.cgroup ? `, cgroup max ${peaks.cgroup.maxUsage.toFixed(0)} MiB` : "") +
            (died ? ", SERVER GONE" : ""),
        );
      } finally {
        sampler.stop();
        await server.stop();
        await removeCgroup(cgroup);
      }
    }
  }
  loadAfter = loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
} finally {
  await upstream?.stop();
  await cp.stop();
  if (!heapSnapshot) rmSync(work, { recursive: true, force: true });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Asks the server for a heap snapshot (SIGUSR2) and moves it to bench/results/raw/. */
async function snapshot(pid: number, name: string): Promise<void> {
  const before = new Set(readdirSync(work));
  process.kill(pid, "SIGUSR2");
  // Node creates the file first and fills it as it walks the heap: wait until its size stops changing.
  let file: string | undefined;
  let size = -1;
  for (let i = 0; i < 120; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    if (!processAlive(pid)) break;
    file ??= readdirSync(work).find((f) => f.endsWith(".heapsnapshot") && !before.has(f));
    if (!file) continue;
    const now = statSync(join(work, file)).size;
    if (now > 0 && now === size) {
      mkdirSync("bench/results/raw", { recursive: true });
      const target = `bench/results/raw/resolver-memory-${name}.heapsnapshot`;
      renameSync(join(work, file), target);
      say(`heap snapshot: ${target} (${(now / MiB).toFixed(0)} MiB)`);
      return;
    }
    size = now;
  }
  say("heap snapshot: none written");
}

const serverName = (r: Run) =>
  r.kind === "coredns" ? "CoreDNS" : `switchyard-dns${r.build ? ` (${r.build})` : ""}`;
const f0 = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "–" : n.toFixed(0));
const lines: string[] = [];
lines.push(
  `# Cluster DNS memory: switchyard-dns vs CoreDNS under kubeadm's Corefile (${new Date().toISOString().slice(0, 10)})`,
);
lines.push("");
lines.push(`Machine: ${machineLine()}`);
lines.push(`Load average before the run: ${loadBefore}; after: ${loadAfter}`);
lines.push(
  `Kubernetes ${readVersions().kubernetes} (lab control plane); ${corednsVersion}; switchyard-dns ${switchyardVersion} ` +
    `(compiled dist, \`-workers 1\`${builds.length ? `; builds: ${builds.map((b) => `${b.label} = ${b.bin}`).join(", ")}` : ""}) on Node ${process.version}` +
    `${nodeArgs.length ? ` with \`${nodeArgs.join(" ")}\`` : ""}; dnsperf 2.10.`,
);
lines.push(`Cluster: ${clusterLine}`);
lines.push("");
lines.push(
  "| server | cgroup limit | qps | p50 ms | p99 ms | lost | CPU µs/query | VmHWM MiB | peak RSS anon / file MiB | cgroup max_usage MiB | cgroup rss / cache at peak MiB | limit hit / OOM kills |",
);
lines.push("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
for (const r of runs) {
  const m = r.measured;
  const cg = r.peaks.cgroup;
  lines.push(
    `| ${serverName(r)}${r.died ? " (died)" : ""} | ${r.limitMiB > 0 ? `${r.limitMiB}Mi` : "none"} | ` +
      `${f0(m.qps)} | ${(m.p50 * 1000).toFixed(2)} | ${(m.p99 * 1000).toFixed(2)} | ${m.lost} | ` +
      `${((m.serverCores * m.seconds * 1e6) / Math.max(1, m.completed)).toFixed(1)} | ${f0(r.peaks.vmHwm)} | ` +
      `${f0(r.peaks.rssAnon)} / ${f0(r.peaks.rssFile)} | ${f0(cg?.maxUsage)} | ${f0(cg?.rssAtPeak)} / ${f0(cg?.cacheAtPeak)} | ` +
      `${cg ? `${cg.failcnt} / ${cg.oomKills}` : "–"} |`,
  );
}
const probed = runs.filter((r) => r.probe);
if (probed.length) {
  lines.push("");
  lines.push("switchyard-dns from inside (process.memoryUsage() and V8's heap spaces, every 500 ms, MiB):");
  lines.push("");
  lines.push(
    "| build | cgroup limit | V8 heap limit | max rss | max heapTotal | max heapUsed | lowest heapUsed after start | max external | max arrayBuffers | spaces at peak rss |",
  );
  lines.push("|---|---|--:|--:|--:|--:|--:|--:|--:|---|");
  for (const r of probed) {
    const p = r.probe as ProbeSummary;
    const spaces = Object.entries(p.atPeakRss?.spaces ?? {})
      .filter(([, v]) => v >= 0.5)
      .map(([k, v]) => `${k.replace(/_space$/, "")} ${v.toFixed(1)}`)
      .join(", ");
    lines.push(
      `| ${r.build ?? "checkout"} | ${r.limitMiB > 0 ? `${r.limitMiB}Mi` : "none"} | ${f0(p.heapSizeLimit)} | ${f0(p.max.rss)} | ${f0(p.max.heapTotal)} | ` +
        `${f0(p.max.heapUsed)} | ${f0(p.minHeapUsed)} | ${f0(p.max.external)} | ${f0(p.max.arrayBuffers)} | ${spaces} |`,
    );
  }
}
lines.push("");
lines.push("## How it was measured");
lines.push("");
lines.push(
  `- \`npm run bench -- resolver-memory ${argv.join(" ")}\`. Each server starts fresh in its own cgroup v1 memory cgroup ` +
    "(a shell joins the cgroup and execs the server), runs alone, and gets the same query file: " +
    `${settings.warmupSeconds} s warm-up, then ${seconds} s of dnsperf over UDP to 127.0.0.1, closed loop, ` +
    `${settings.clients} clients, at most ${settings.outstanding} queries outstanding.`,
);
lines.push(
  "- The query file: A for every Service and headless endpoint, SRV and AAAA for a quarter of the ClusterIP Services, " +
    `search-path NXDOMAINs, and ${settings.externalNames} names outside the cluster each with the three search-path NXDOMAINs ` +
    "a ndots:5 pod sends first (the outside names are forwarded to a local CoreDNS `template` upstream, then cached).",
);
lines.push(
  "- VmHWM is the kernel's peak resident set of the process over its whole life (startup, informer sync, load). " +
    "Anon/file split the sampled resident set (every 250 ms): anonymous memory is the heap and malloc; file-backed " +
    "is the mapped executable and libraries, which a container is charged for when it is the first to touch them. " +
    "memory.max_usage_in_bytes is the most the kernel ever charged the cgroup (anonymous memory plus page cache " +
    "first faulted in it; here the binaries were already cached by the host, so mostly anonymous). switchyard-dns starts itself again once at start (same pid, see apps/cluster-dns/README.md): VmHWM is that second image's, the cgroup counts both.",
);
lines.push(
  "- `170Mi` is kubeadm's CoreDNS memory limit. Node reads the cgroup limit at start and sizes V8's heap from it " +
    "(heap limit column), so the unconstrained run shows how the heap grows when Node thinks it has the whole machine.",
);
lines.push("");
lines.push(
  inCluster
    ? "Corefile (kubeadm v1.37.2's, with local ports and the local upstream; each server on the `kube-system/coredns` ServiceAccount token of apps/cluster-dns/deploy/rbac.yaml, mounted at /var/run/secrets/kubernetes.io/serviceaccount in its own mount namespace, KUBERNETES_SERVICE_HOST/PORT set, as in a pod):"
    : "Corefile (kubeadm v1.37.2's, with local ports, a kubeconfig line and the local upstream):",
);
lines.push("");
lines.push("```");
lines.push(
  kubeadmCorefile({
    ...(inCluster ? {} : { kubeconfigPath: "<lab admin.kubeconfig>" }),
    kubeContext: KUBE_CONTEXT,
    upstreamPort: 0,
    ports: { dns: 0, health: 0, ready: 0, metrics: 0 },
  })
    .replace(/127\.0\.0\.1:0/g, "127.0.0.1:<port>")
    .replace(".:0 {", ".:<port> {")
    .trimEnd(),
);
lines.push("```");
const report = `${lines.join("\n")}\n`;
console.log(report);
const target = quick
  ? "bench/results/raw/resolver-memory-quick.md"
  : `bench/results/resolver-memory${inCluster ? "-in-cluster" : ""}.md`;
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, report);
say(`wrote ${target}; done in ${((performance.now() - started) / 1000).toFixed(0)} s`);

/** A token of kube-system/coredns bound by apps/cluster-dns/deploy/rbac.yaml, laid out as a pod gets it. */
async function podCredentials(): Promise<{ folder: string; env: NodeJS.ProcessEnv }> {
  const api = new Api(cp.server, cp.stateDir);
  try {
    const rbac = readManifests(process.cwd(), ["apps/cluster-dns/deploy"]).filter((o) =>
      ["ServiceAccount", "ClusterRole", "ClusterRoleBinding"].includes(o.kind),
    );
    await applyManifests(api, rbac);
    const token = await serviceAccountToken(api, "kube-system", "coredns");
    const folder = serviceAccountFolder(token, join(cp.stateDir, "pki", "ca.crt"), "kube-system");
    const server = new URL(cp.server);
    return {
      folder,
      env: { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
    };
  } finally {
    api.close();
  }
}
