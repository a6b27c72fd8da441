// Our EndpointSlice controller side by side with upstream's (kube-controller-manager v1.37.2 running
// only endpointslice-controller), each alone on a fresh lab control plane: a 5000-pod Service and one
// pod change in it, a 1000-pod rolling update, 2000 Services x 10 pods. `--quick` scales it down 10x.
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { startControlPlane } from "@switchyard/testbed";
import { readVersions } from "@switchyard/testbed/upstream";
import { machineLine } from "./machine.js";
import {
  type ControllerKind,
  memoryKiB,
  type RunningController,
  startController,
} from "./slice-controller/controllers.js";
import { ApiPool } from "./slice-controller/pool.js";
import { type Measured, renderReport } from "./slice-controller/report.js";
import {
  bigService,
  type Context,
  type ManyServicesResult,
  manyServices,
  rollingUpdate,
} from "./slice-controller/scenarios.js";
import { SliceWatch } from "./slice-controller/slice-watch.js";
import {
  createNamespace,
  createNodes,
  createReadyPods,
  createWebService,
  emptyNamespace,
  Planner,
} from "./slice-controller/workload.js";

const quick = process.argv.includes("--quick");
const scale = quick ? 10 : 1;
const workload = {
  bigPods: 5000 / scale,
  rollingPods: 1000 / scale,
  rollingBatch: 25,
  services: 2000 / scale,
  podsPerService: 10,
  nodes: 20,
};
const started = performance.now();
const loadAtStart = loadavg()[0] ?? 0;
const progress = (kind: string) => (line: string) =>
  process.stderr.write(
    `[bench slice-controller] ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s ${kind}: ${line}\n`,
  );

/** Waits until the controller has synced its caches and writes: one Pod, one Service, one slice. */
async function warmUp(ctx: Context, probe: string): Promise<void> {
  const api = ctx.pool.first;
  const watch = await SliceWatch.open(api, "warmup");
  try {
    const plan = ctx.planner.pod(probe, { app: probe });
    await createReadyPods(ctx.pool, "warmup", [plan]);
    await createWebService(api, "warmup", probe, { app: probe });
    await watch.settle(() => watch.of(probe).some((s) => (s.endpoints ?? []).length === 1), {
      what: `${probe} warm-up`,
      quietMs: 500,
      timeoutMs: 180_000,
    });
  } finally {
    watch.stop();
  }
}

async function measure(kind: "ours" | "upstream"): Promise<Measured> {
  const say = progress(kind);
  say("starting control plane");
  const cp = await startControlPlane();
  const pool = new ApiPool(cp.server, cp.stateDir);
  let controller: RunningController | undefined;
  try {
    const nodes = await createNodes(pool.first, workload.nodes);
    await createNamespace(pool.first, "warmup");
    say("starting controller");
    controller = await startController(kind, cp.stateDir, cp.kubeconfigPath);
    const ctx: Context = { pool, planner: new Planner(nodes), controller, progress: say };
    await warmUp(ctx, "probe-1");
    const restRssMiB = memoryKiB(controller.pid).rss / 1024;
    const { big, oneChange } = await bigService(ctx, workload.bigPods);
    const rolling = await rollingUpdate(ctx, workload.rollingPods, workload.rollingBatch);

    // A fresh process for the memory figure, without the earlier scenarios' Pods in its caches.
    say("restarting controller on emptied namespaces");
    await controller.stop();
    await emptyNamespace(pool.first, "big", ["big"]);
    await emptyNamespace(pool.first, "roll", ["roll"]);
    controller = await startController(kind, cp.stateDir, cp.kubeconfigPath);
    ctx.controller = controller;
    await warmUp(ctx, "probe-2");
    const many = await manyServices(ctx, workload.services, workload.podsPerService);
    return { big, oneChange, rolling, many, restRssMiB };
  } finally {
    say("stopping");
    await controller?.stop();
    pool.close();
    await cp.stop();
  }
}

/** Only the many-Services scenario, on a fresh control plane (for the unthrottled upstream). */
async function measureMany(kind: ControllerKind): Promise<ManyServicesResult> {
  const say = progress(kind);
  say("starting control plane");
  const cp = await startControlPlane();
  const pool = new ApiPool(cp.server, cp.stateDir);
  let controller: RunningController | undefined;
  try {
    const nodes = await createNodes(pool.first, workload.nodes);
    await createNamespace(pool.first, "warmup");
    say("starting controller");
    controller = await startController(kind, cp.stateDir, cp.kubeconfigPath);
    const ctx: Context = { pool, planner: new Planner(nodes), controller, progress: say };
    await warmUp(ctx, "probe-1");
    return await manyServices(ctx, workload.services, workload.podsPerService);
  } finally {
    say("stopping");
    await controller?.stop();
    pool.close();
    await cp.stop();
  }
}

// One at a time, so none competes with another for the two cores.
const upstream = await measure("upstream");
const upstreamUnthrottled = await measureMany("upstream-unthrottled");
const ours = await measure("ours");
const report = renderReport({
  date: new Date().toISOString().slice(0, 10),
  machine: machineLine(),
  kubernetes: readVersions().kubernetes,
  quick,
  workload,
  ours,
  upstream,
  upstreamUnthrottled,
  totalS: (performance.now() - started) / 1000,
  load: [loadAtStart, loadavg()[0] ?? 0],
});
console.log(report);
// A smoke run only prints: its numbers are not the benchmark's.
if (!quick) {
  mkdirSync("bench/results", { recursive: true });
  writeFileSync("bench/results/slice-controller.md", report);
}
