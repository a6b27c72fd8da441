// switchyard-proxy side by side with the real kube-proxy v1.37.2 on one lab control plane and one kernel:
// N Services x 10 endpoints (1k, 5k, 10k), iptables (iptables-nft and legacy backends) and nftables modes, each proxy
// alone in its own node network namespace, one at a time; in nftables mode ours runs twice, with its netlink
// writer and with `nft -f` (SWITCHYARD_PROXY_NFT_WRITER=nft); ebpf mode is ours alone, read against upstream's
// nftables mode. Per run: the start-up (full) sync, single-endpoint (partial) syncs with the bytes (ebpf: map
// entries) each sends to the kernel, the writer's time and the kernel's system time of both, first-packet
// latency to Service #1 and the last Service, new connections per second through Service #1, and the CPU per
// packet of a steady stream through it. Before that, our renderers alone on 10k x 10 (time and heap). Writes
// bench/results/proxier.md.
//
//   npm run bench -- proxier [--quick] [--sizes 1000,5000] [--modes iptables,iptables-legacy,nftables,ebpf]
//     [--budget-min 40] [--impls kube-proxy,switchyard,switchyard-nft] [--no-render] [--out bench/results/proxier.md]
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { NODE_IP } from "@switchyard/kube-proxy-app/testing";
import { startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import { readVersions } from "@switchyard/testbed/upstream";
import { machineLine, median } from "./machine.js";
import { BenchApi, createBase, createServices, REAL_POD_IPS } from "./proxier/cluster.js";
import { type ConnectRate, connectRate } from "./proxier/connect-rate.js";
import { cpuPerPacket, type PacketCost } from "./proxier/cpu-per-packet.js";
import {
  connectLatency,
  kubeServicesLength,
  kubeServicesPositions,
  samplePartialSyncs,
  waitForFullSync,
} from "./proxier/measure.js";
import {
  IMPLS as ALL_IMPLS,
  MODES as ALL_MODES,
  type Impl,
  type Mode,
  type ProxyUnderTest,
  runsIn,
  startUnderTest,
} from "./proxier/proxies.js";
import { benchRender, type RenderResult } from "./proxier/render.js";
import { MODE_LABEL, type RunResult, renderReport } from "./proxier/report.js";
import { KernelWriteLog } from "./proxier/shim.js";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const sizesFlag = argv.indexOf("--sizes");
const sizes =
  sizesFlag >= 0
    ? (argv[sizesFlag + 1] ?? "")
        .split(",")
        .map(Number)
        .filter((n) => n > 0)
        .sort((a, b) => a - b)
    : quick
      ? [1000]
      : [1000, 5000, 10000];
const samples = quick ? 5 : 20;
const connects = quick ? 50 : 200;
// The connection loop's and the stream's length, the loop's workers (one per core), and how many times each
// runs (through the Service and without it, alternating).
const trafficSeconds = quick ? 2 : 3;
const connectWorkers = 2;
const connectRounds = quick ? 1 : 2;
const streamRounds = quick ? 1 : 3;
const renderRuns = quick ? 3 : 5;
// Past this many minutes the remaining proxy runs are skipped (and reported as skipped).
const budgetFlag = argv.indexOf("--budget-min");
const budgetMin = budgetFlag >= 0 ? Number(argv[budgetFlag + 1]) : 40;
const renderSize = 10000;
const modesFlag = argv.indexOf("--modes");
const MODES: Mode[] =
  modesFlag >= 0
    ? (argv[modesFlag + 1] ?? "").split(",").filter((m): m is Mode => (ALL_MODES as string[]).includes(m))
    : [...ALL_MODES];
const skipRender = argv.includes("--no-render");
const outFlag = argv.indexOf("--out");
const outPath = outFlag >= 0 ? (argv[outFlag + 1] ?? "bench/results/proxier.md") : "bench/results/proxier.md";
const implsFlag = argv.indexOf("--impls");
const IMPLS: Impl[] =
  implsFlag >= 0
    ? (argv[implsFlag + 1] ?? "")
        .split(",")
        .filter((m): m is Impl => (ALL_IMPLS as readonly string[]).includes(m))
    : [...ALL_IMPLS];
const started = Date.now();

const say = (msg: string) =>
  process.stderr.write(
    `[bench proxier ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`,
  );

let cp: TestControlPlane | undefined;
let current: ProxyUnderTest | undefined;
let api: BenchApi | undefined;
const shims = { nft: new KernelWriteLog("nft"), legacy: new KernelWriteLog("legacy") };
const shimFor = (mode: Mode) => (mode === "iptables-legacy" ? shims.legacy : shims.nft);

async function cleanup(): Promise<void> {
  await current?.stop().catch(() => {});
  current = undefined;
  api?.close();
  await cp?.stop().catch(() => {});
  cp = undefined;
  shims.nft.remove();
  shims.legacy.remove();
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    say(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

const runs: RunResult[] = [];
let render: RenderResult[] = [];
const shimOverheadMs = shims.nft.measureOverhead();

function write(done: boolean): void {
  const text = renderReport({
    date: new Date().toISOString().slice(0, 10),
    machine: machineLine(),
    versions: `Kubernetes ${readVersions().kubernetes} (kube-apiserver, etcd ${readVersions().etcd}, kube-proxy)`,
    quick,
    sizes,
    samples,
    connects,
    trafficSeconds,
    connectWorkers,
    connectRounds,
    streamRounds,
    shimOverheadMs,
    render,
    renderRuns,
    runs,
    wallMinutes: (Date.now() - started) / 60_000,
    notes: done ? notes() : ["(run in progress)"],
  });
  mkdirSync("bench/results", { recursive: true });
  writeFileSync(outPath, text);
  if (done) console.log(text);
}

/** Facts read off the numbers (the hand-written reading, if any, goes below them). */
function notes(): string[] {
  const out: string[] = [];
  const failed = runs.filter((r) => r.error);
  for (const r of failed) out.push(`- ${r.impl} ${MODE_LABEL[r.mode]} at ${r.services} failed: ${r.error}`);
  const maxLoad = Math.max(...runs.map((r) => r.load));
  out.push(
    `- Contention: 1-minute load average at run starts ranged ${Math.min(...runs.map((r) => r.load)).toFixed(1)}–${maxLoad.toFixed(1)} on 2 cores` +
      " (the API server, etcd and this process share them with the proxy under test; other agents' benchmarks may have been running).",
  );
  for (const mode of MODES) {
    for (const impl of IMPLS) {
      const rs = runs.filter((r) => r.mode === mode && r.impl === impl && r.latency);
      if (rs.length < 1) continue;
      const cells = rs.map((r) => {
        const first = median(r.latency?.first ?? []);
        const last = median(r.latency?.last ?? []);
        const pod = r.latency?.pod?.length ? `, a pod IP ${median(r.latency.pod).toFixed(0)} µs` : "";
        return `${r.services}: #1 ${first.toFixed(0)} µs, last ${last.toFixed(0)} µs${pod}`;
      });
      out.push(`- First packet, ${impl}, ${MODE_LABEL[mode]}: ${cells.join("; ")}.`);
    }
  }
  out.push(...clientShare());
  return out;
}

/**
 * How much of the machine the connection loop's own code took: its user CPU per connection times the rate,
 * against the two cores. A small share says the client is not what limits the rate.
 */
function clientShare(): string[] {
  const shares = runs.flatMap((r) => {
    const c = r.connectRate?.service;
    return c ? [(c.clientUserUs * c.perSecond) / 1e6 / 2] : [];
  });
  if (shares.length === 0) return [];
  const users = runs.flatMap((r) => (r.connectRate ? [r.connectRate.service.clientUserUs] : []));
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  return [
    `- Connection loop: the client's Python code used ${Math.min(...users).toFixed(0)}–${Math.max(...users).toFixed(0)} µs of user CPU per connection,` +
      ` ${pct(Math.min(...shares))}–${pct(Math.max(...shares))} of the two cores at the rates measured; the rest of each connection's cost is the kernel's` +
      " (the client's system time in the table) and the pods' servers'.",
  ];
}

/** New connections per second and CPU per packet through Service #1; a failure leaves the other figures standing. */
async function measureTraffic(
  p: ProxyUnderTest,
  clusterIP: string,
  label: string,
): Promise<Pick<RunResult, "connectRate" | "packetCost" | "trafficError" | "trafficLoad">> {
  const out: {
    connectRate?: ConnectRate;
    packetCost?: PacketCost;
    trafficError?: string;
    trafficLoad: number;
  } = {
    trafficLoad: loadavg()[0] ?? 0,
  };
  const failed = (what: string, err: unknown) => {
    say(`${label}: ${what} FAILED: ${(err as Error).message.slice(0, 2000)}`);
    out.trafficError = `${out.trafficError ? `${out.trafficError}; ` : ""}${what}: ${(err as Error).message.split("\n")[0]}`;
  };
  try {
    const rate = connectRate(p, clusterIP, {
      seconds: trafficSeconds,
      workers: connectWorkers,
      rounds: connectRounds,
    });
    say(
      `${label}: ${rate.service.perSecond.toFixed(0)} new conn/s (pod IPs: ${rate.ceiling.perSecond.toFixed(0)}/s), client ${rate.service.clientUserUs.toFixed(0)} µs user per conn`,
    );
    out.connectRate = rate;
  } catch (err) {
    failed("connection loop", err);
  }
  try {
    const cost = await cpuPerPacket(p, clusterIP, { seconds: trafficSeconds, rounds: streamRounds });
    say(
      `${label}: ${cost.service.cpuUsPerPacket.toFixed(2)} µs CPU per packet (pod IP: ${cost.floor.cpuUsPerPacket.toFixed(2)} µs), ${(cost.service.packetsPerSecond / 1000).toFixed(0)} kpkt/s`,
    );
    out.packetCost = cost;
  } catch (err) {
    failed("stream", err);
  }
  return out;
}

try {
  say(`machine: ${machineLine()}`);
  say(`PATH wrapper overhead: ${shimOverheadMs.toFixed(1)} ms per call`);
  say(`render: ${renderSize} Services x 10, ${renderRuns} runs per mode`);
  render = skipRender ? [] : benchRender(renderSize, renderRuns);
  for (const r of render)
    say(
      `render ${r.mode}: full ${median(r.fullMs).toFixed(0)} ms, partial ${median(r.partialMs).toFixed(1)} ms`,
    );

  say("starting the control plane");
  cp = await startControlPlane();
  api = new BenchApi(cp.server, cp.stateDir);
  await createBase(api, NODE_IP);
  const realServices = new Set([0, ...sizes.map((n) => n - 1)]);
  const clusterIPs = new Map<number, string>();
  const flipped = new Map<number, boolean>();
  let subnet = 230;
  let created = 0;
  for (const n of sizes) {
    say(`creating Services ${created}..${n - 1} (+ one EndpointSlice each)`);
    const t0 = Date.now();
    const ips = await createServices(api, created, n, realServices, (d) => say(`  ${created + d}/${n}`));
    for (const [i, ip] of ips) clusterIPs.set(i, ip);
    say(`  created in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    created = n;
    const targets = [clusterIPs.get(0) ?? "", clusterIPs.get(n - 1) ?? ""];
    // changes go to Services in the middle, never to the two with real listeners
    const changeAt = Array.from(
      { length: samples },
      (_, k) => Math.floor(n / 2) - Math.floor(samples / 2) + k,
    );
    for (const mode of MODES) {
      for (const impl of IMPLS.filter((i) => runsIn(i, mode))) {
        const load = loadavg()[0] ?? 0;
        const label = `${n} Services, ${mode}, ${impl}`;
        if ((Date.now() - started) / 60_000 > budgetMin) {
          say(`${label}: skipped, past the ${budgetMin} min budget`);
          runs.push({ services: n, mode, impl, error: `skipped: past the ${budgetMin} min budget`, load });
          continue;
        }
        say(`${label}: starting (load ${load.toFixed(1)})`);
        try {
          const shim = shimFor(mode);
          current = await startUnderTest({ impl, mode, subnet: subnet++, cp, shim, services: n });
          const full = await waitForFullSync(current, shim, targets, 10 * 60_000);
          say(
            `${label}: full sync ${full.seconds.toFixed(2)} s${full.exact ? "" : " (≈)"}, ready after ${full.readySeconds.toFixed(1)} s`,
          );
          const partials = await samplePartialSyncs(api, current, shim, changeAt, flipped);
          const sent =
            mode === "ebpf"
              ? `${median(partials.map((p) => p.entries ?? 0))} map entries`
              : `${median(partials.map((p) => p.bytes))} B`;
          say(
            `${label}: partial syncs median ${(median(partials.map((p) => p.seconds)) * 1000).toFixed(1)} ms over ${partials.length}, ${sent} each`,
          );
          // A pod's own address, interleaved with the two: the path every mode's connects cross at the least.
          const [first = [], last = [], pod = []] = connectLatency(
            current,
            [...targets, REAL_POD_IPS[0] ?? ""],
            connects,
          );
          const positions =
            mode === "iptables" || mode === "iptables-legacy"
              ? (() => {
                  const [a, b] = kubeServicesPositions(current, targets);
                  return { first: a, last: b, chainLength: kubeServicesLength(current) };
                })()
              : undefined;
          say(
            `${label}: connect #1 ${median(first).toFixed(0)} µs, last ${median(last).toFixed(0)} µs, pod IP ${median(pod).toFixed(0)} µs`,
          );
          const traffic = await measureTraffic(current, targets[0] ?? "", label);
          runs.push({
            services: n,
            mode,
            impl,
            full,
            partials,
            latency: { first, last, pod },
            ...(positions ? { positions } : {}),
            peakRssMiB: current.peakRssMiB(),
            // At rest: the changes are synced and the connects done; nothing changes until the next resync.
            restRssMiB: current.rssMiB(),
            ...traffic,
            load,
          });
        } catch (err) {
          say(`${label}: FAILED: ${(err as Error).message.slice(0, 2000)}`);
          runs.push({ services: n, mode, impl, error: (err as Error).message.split("\n")[0] ?? "", load });
        } finally {
          await current?.stop().catch((err: unknown) => say(`${label}: stopping: ${(err as Error).message}`));
          current = undefined;
        }
        write(false);
      }
    }
  }
  write(true);
} finally {
  await cleanup();
}
