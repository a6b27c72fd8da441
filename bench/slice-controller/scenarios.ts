// The four measurements, each in its own namespace with its own slice watch. Every scenario first
// builds its Pods, then makes one change at a known moment (t0) and waits until the slices are
// right and have stopped changing; "converge" is t0 to the last slice write.

import { setPodReady } from "@switchyard/testbed";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { cpuSeconds, memoryKiB, type RunningController } from "./controllers.js";
import { type ApiPool, forEachConcurrent, retrying } from "./pool.js";
import { endpointsOf, jsonBytes, readyCount, SliceWatch, type WriteTally } from "./slice-watch.js";
import {
  CONCURRENCY,
  createNamespace,
  createReadyPods,
  createWebService,
  deletePodsNow,
  type Planner,
} from "./workload.js";

export interface Context {
  pool: ApiPool;
  planner: Planner;
  /** The controller under test; replaced when the benchmark restarts it. */
  controller: RunningController;
  progress(line: string): void;
}

/** What the controller spent between now and the call of the returned function. */
export interface Cost {
  /** CPU time of the controller process (user + system). */
  cpuS: number;
  /** Syncs it refused because its slice cache was older than its own writes. */
  staleSyncs: number;
}

async function costFrom(ctx: Context): Promise<() => Promise<Cost>> {
  const c = ctx.controller;
  const cpu = cpuSeconds(c.pid);
  const stale = await c.staleSyncs();
  return async () => ({ cpuS: cpuSeconds(c.pid) - cpu, staleSyncs: (await c.staleSyncs()) - stale });
}

const PER_SLICE = 100;
const seconds = (ms: number) => ms / 1000;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

export interface BigServiceResult {
  pods: number;
  slices: number;
  convergeS: number;
  writes: WriteTally;
  cost: Cost;
}

export interface OneChangeResult {
  writes: WriteTally;
  /** Size of each written slice as served on the watch, and without managedFields. */
  bytes: number[];
  bytesWithoutManagedFields: number[];
  /** All of the Service's slices, the size of one object holding every endpoint (as Endpoints did). */
  allSlicesBytes: number;
  slicesTouched: number;
  slicesTotal: number;
  latencyS: number;
}

/** A Service selecting `pods` ready Pods at once (selector patched onto existing Pods), then one Pod turning not ready. */
export async function bigService(
  ctx: Context,
  pods: number,
): Promise<{ big: BigServiceResult; oneChange: OneChangeResult }> {
  const api = ctx.pool.first;
  const ns = "big";
  await createNamespace(api, ns);
  const watch = await SliceWatch.open(api, ns);
  try {
    ctx.progress(`big: creating ${pods} ready pods`);
    const plans = range(pods).map((i) => ctx.planner.pod(`big-${i}`, { app: "big" }));
    await createReadyPods(ctx.pool, ns, plans);
    await createWebService(api, ns, "big", { app: "big", stage: "not-yet" });
    await watch.settle(() => watch.of("big").length >= 1, { what: "big placeholder", timeoutMs: 60_000 });

    ctx.progress(`big: selecting the ${pods} pods`);
    const mark = watch.mark();
    const spent = await costFrom(ctx);
    const t0 = performance.now();
    await api.mergePatch(`/api/v1/namespaces/${ns}/services/big`, { spec: { selector: { stage: null } } });
    const last = await watch.settle(() => readyCount(watch.of("big")) === pods, { what: "big service" });
    const big = {
      pods,
      slices: watch.of("big").length,
      convergeS: seconds(last - t0),
      writes: watch.tally(mark),
      cost: await spent(),
    };
    ctx.progress(`big: ${big.slices} slices after ${big.convergeS.toFixed(2)} s, ${big.writes.total} writes`);

    ctx.progress("big: one pod turns not ready");
    const victim = plans[Math.floor(pods / 2)] as (typeof plans)[number];
    const before = new Map(watch.of("big").map((s) => [s.metadata?.name, s.metadata?.resourceVersion]));
    const allSlicesBytes = watch.of("big").reduce((n, s) => n + jsonBytes(s), 0);
    const mark2 = watch.mark();
    const t1 = performance.now();
    await setPodReady(api, ns, victim.name, [victim.ip], false);
    const notReady = () =>
      endpointsOf(watch.of("big")).some(
        (e) => e.targetRef?.name === victim.name && e.conditions?.ready === false,
      );
    const last2 = await watch.settle(notReady, { what: "one pod change" });
    const after = watch.of("big");
    const written = watch.since(mark2);
    const oneChange = {
      writes: watch.tally(mark2),
      bytes: written.map((w) => w.bytes),
      bytesWithoutManagedFields: written.map((w) => w.bytesWithoutManagedFields),
      allSlicesBytes,
      slicesTouched: after.filter((s) => before.get(s.metadata?.name) !== s.metadata?.resourceVersion).length,
      slicesTotal: after.length,
      latencyS: seconds(last2 - t1),
    };
    ctx.progress(`big: one change -> ${oneChange.writes.total} writes, ${oneChange.bytes.join("+")} bytes`);
    return { big, oneChange };
  } finally {
    watch.stop();
  }
}

export interface RollingResult {
  pods: number;
  batch: number;
  writes: WriteTally;
  slices: number;
  fragmentation: number;
  convergeS: number;
  driveS: number;
  cost: Cost;
}

/** `pods` ready Pods replaced `batch` at a time: create a batch of new ones, delete as many old ones. */
export async function rollingUpdate(ctx: Context, pods: number, batch: number): Promise<RollingResult> {
  const api = ctx.pool.first;
  const ns = "roll";
  await createNamespace(api, ns);
  const watch = await SliceWatch.open(api, ns);
  try {
    ctx.progress(`rolling: creating ${pods} ready pods`);
    const old = range(pods).map((i) => ctx.planner.pod(`roll-old-${i}`, { app: "roll" }));
    await createReadyPods(ctx.pool, ns, old);
    await createWebService(api, ns, "roll", { app: "roll" });
    await watch.settle(() => readyCount(watch.of("roll")) === pods, { what: "rolling setup" });

    ctx.progress(`rolling: replacing ${pods} pods in batches of ${batch}`);
    const fresh = range(pods).map((i) => ctx.planner.pod(`roll-new-${i}`, { app: "roll" }));
    const mark = watch.mark();
    const spent = await costFrom(ctx);
    const t0 = performance.now();
    for (let i = 0; i < pods; i += batch) {
      await createReadyPods(ctx.pool, ns, fresh.slice(i, i + batch));
      await deletePodsNow(
        ctx.pool,
        ns,
        old.slice(i, i + batch).map((p) => p.name),
      );
    }
    const driveS = seconds(performance.now() - t0);
    const done = () => {
      const eps = endpointsOf(watch.of("roll"));
      return (
        eps.length === pods &&
        eps.every((e) => e.conditions?.ready === true && e.targetRef?.name?.startsWith("roll-new-"))
      );
    };
    const last = await watch.settle(done, { what: "rolling update" });
    const slices = watch.of("roll").length;
    const result = {
      pods,
      batch,
      writes: watch.tally(mark),
      slices,
      fragmentation: slices / Math.ceil(pods / PER_SLICE),
      convergeS: seconds(last - t0),
      driveS,
      cost: await spent(),
    };
    ctx.progress(
      `rolling: ${result.writes.total} writes, ${slices} slices, converged ${result.convergeS.toFixed(2)} s`,
    );
    return result;
  } finally {
    watch.stop();
  }
}

export interface ManyServicesResult {
  services: number;
  podsPerService: number;
  convergeS: number;
  createServicesS: number;
  writes: WriteTally;
  slices: number;
  peakRssMiB: number;
  rssMiB: number;
  cost: Cost;
  /** CPU time of the controller process since it started (it was restarted for this scenario). */
  processCpuS: number;
}

/** `services` Services of `podsPer` ready Pods each, the Services created at once over existing Pods. */
export async function manyServices(
  ctx: Context,
  services: number,
  podsPer: number,
): Promise<ManyServicesResult> {
  const api = ctx.pool.first;
  const ns = "many";
  await createNamespace(api, ns);
  const watch = await SliceWatch.open(api, ns);
  try {
    ctx.progress(`many: creating ${services * podsPer} ready pods`);
    const plans = range(services).flatMap((s) =>
      range(podsPer).map((p) => ctx.planner.pod(`m-${s}-${p}`, { app: `m-${s}` })),
    );
    await createReadyPods(ctx.pool, ns, plans);

    ctx.progress(`many: creating ${services} services at once`);
    const mark = watch.mark();
    const spent = await costFrom(ctx);
    const t0 = performance.now();
    await forEachConcurrent(range(services), CONCURRENCY, (s, i) =>
      retrying(() => createWebService(ctx.pool.pick(i), ns, `m-${s}`, { app: `m-${s}` })),
    );
    const createServicesS = seconds(performance.now() - t0);
    const done = () => {
      const ready = new Map<string, number>();
      for (const s of watch.slices.values()) {
        const svc = s.metadata?.labels?.["kubernetes.io/service-name"] ?? "";
        ready.set(svc, (ready.get(svc) ?? 0) + readyCount([s as EndpointSlice]));
      }
      return ready.size === services && [...ready.values()].every((n) => n === podsPer);
    };
    const last = await watch.settle(done, { what: "many services", timeoutMs: 900_000 });
    const mem = memoryKiB(ctx.controller.pid);
    const result = {
      services,
      podsPerService: podsPer,
      convergeS: seconds(last - t0),
      createServicesS,
      writes: watch.tally(mark),
      slices: watch.slices.size,
      peakRssMiB: mem.hwm / 1024,
      rssMiB: mem.rss / 1024,
      cost: await spent(),
      processCpuS: cpuSeconds(ctx.controller.pid),
    };
    ctx.progress(
      `many: converged ${result.convergeS.toFixed(2)} s, ${result.slices} slices, VmHWM ${result.peakRssMiB.toFixed(0)} MiB`,
    );
    return result;
  } finally {
    watch.stop();
  }
}
