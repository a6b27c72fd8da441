// The lab's topology-auto scenario replayed on one real apiserver with two EndpointSlice controllers at
// once: upstream's (kube-controller-manager v1.37.2) and this program, in-process, writing its slices
// under its own managed-by value so neither sees the other's slices. Both get the same Pods, so after
// each step their Auto hints and the TopologyAware* Events they recorded on the Service must agree.
//
// Plan, as `switchyard-lab up` gives it: node-1 and node-3 in zone-a, node-2 in zone-b, 2 CPUs each
// (zone-a 67%). Pods come and go like the lab's pause pods: created bound to a node, given an IP a
// moment later, then Ready; deleted gracefully (terminating, not ready), then gone.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { discardLogger } from "@switchyard/kube";
import { prng, sleep } from "@switchyard/kube/testing";
import type { EndpointSlice } from "@switchyard/slice-controller";
import {
  logTail,
  missingControllerManager,
  missingControlPlane,
  startControlPlane,
  startUpstreamSliceController,
  type TestControlPlane,
  type UpstreamSliceController,
} from "@switchyard/testbed";
import type { Event as CoreEvent } from "kubernetes-types/core/v1.js";
import { type App, DEFAULT_FLAGS, startApp } from "../src/index.js";
import { Api, createNamespace, createNode, deletePod, setPodReady } from "./helpers.js";

const NS = "topology-auto";
const OURS = "switchyard-slice-controller.test";
const UPSTREAM = "endpointslice-controller.k8s.io";
const IDENTITY = "switchyard-under-test";
const NODES = [
  { name: "node-1", zone: "zone-a" },
  { name: "node-2", zone: "zone-b" },
  { name: "node-3", zone: "zone-a" },
] as const;
const ZONES = ["zone-a", "zone-b"] as const;
type Zone = (typeof ZONES)[number];

/** The lab's splits, then its flap point for a 67/33 CPU split: 2 endpoints withhold hints, 3 allow them. */
const STEPS: Array<[number, number]> = [
  [2, 20],
  [5, 17],
  [11, 11],
  [1, 1],
  [1, 2],
  [1, 1],
  [1, 2],
  [1, 1],
  [1, 2],
  [1, 1],
];

const skip = missingControlPlane(["kube-controller-manager"]) ?? missingControllerManager();

/** Pause pods as a scheduler and kubelet would move them along, pinned by zone. */
class Pods {
  readonly #have: Record<Zone, string[]> = { "zone-a": [], "zone-b": [] };
  readonly #inFlight: Promise<void>[] = [];
  // Seeded, so the interleaving of Pod changes is the same on every run.
  readonly #random = prng(7);
  #serial = 0;

  constructor(readonly api: Api) {}

  async setSplit(a: number, b: number): Promise<void> {
    for (const [zone, want] of [
      ["zone-a", a],
      ["zone-b", b],
    ] as Array<[Zone, number]>) {
      const names = this.#have[zone];
      const add: string[] = [];
      while (names.length + add.length < want) add.push(`${zone}-${this.#serial++}`);
      const drop = names.splice(want);
      for (const name of add) await this.#create(name, zone);
      names.push(...add);
      for (const name of drop) await this.#delete(name);
    }
    await Promise.all(this.#inFlight.splice(0));
  }

  async #create(name: string, zone: Zone): Promise<void> {
    const serial = Number(name.slice(name.lastIndexOf("-") + 1));
    const nodes = NODES.filter((n) => n.zone === zone);
    const node = nodes[serial % nodes.length]?.name ?? "node-1";
    const ip = `10.244.${Math.floor(serial / 200)}.${(serial % 200) + 2}`;
    await this.api.post(`/api/v1/namespaces/${NS}/pods`, {
      metadata: { name, labels: { app: "auto" } },
      spec: { nodeName: node, containers: [{ name: "pause", image: "registry.k8s.io/pause:3.10" }] },
    });
    const started = this.#random() * 300;
    const ready = started + this.#random() * 300;
    this.#inFlight.push(
      (async () => {
        await sleep(started);
        await setPodReady(this.api, NS, name, [ip], false);
        await sleep(ready - started);
        await setPodReady(this.api, NS, name, [ip], true);
      })(),
    );
  }

  async #delete(name: string): Promise<void> {
    await deletePod(this.api, NS, name, 30);
    const gone = this.#random() * 400;
    this.#inFlight.push(sleep(gone).then(() => deletePod(this.api, NS, name, 0)));
  }
}

async function slicesOf(api: Api, service: string, managedBy: string): Promise<EndpointSlice[]> {
  const selector = encodeURIComponent(
    `kubernetes.io/service-name=${service},endpointslice.kubernetes.io/managed-by=${managedBy}`,
  );
  const list = await api.get<{ items: EndpointSlice[] }>(
    `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=${selector}`,
  );
  return list.items.map((s) => ({ ...s, endpoints: s.endpoints ?? [] }));
}

/**
 * What the lab reports: ready endpoints by "own zone>hinted zone", plus ready endpoints without a hint.
 * Which endpoints a zone donates is map order upstream, so only the counts are compared.
 */
function hintSummary(slices: readonly EndpointSlice[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of slices.flatMap((s) => s.endpoints)) {
    if (e.conditions?.ready !== true) continue;
    const zones = e.hints?.forZones ?? [];
    const keys = zones.length === 0 ? [`${e.zone}>none`] : zones.map((z) => `${e.zone}>${z.name}`);
    for (const key of keys) out[key] = (out[key] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([x], [y]) => (x < y ? -1 : 1)));
}

/** Occurrences of each TopologyAware* Event on the Service, per controller (folded Events count n times). */
async function hintEvents(api: Api): Promise<{ ours: Map<string, number>; upstream: Map<string, number> }> {
  const selector = encodeURIComponent("involvedObject.kind=Service,involvedObject.name=auto");
  const list = await api.get<{ items: CoreEvent[] }>(
    `/api/v1/namespaces/${NS}/events?fieldSelector=${selector}`,
  );
  const ours = new Map<string, number>();
  const upstream = new Map<string, number>();
  for (const e of list.items) {
    if (!(e.reason ?? "").startsWith("TopologyAwareHints")) continue;
    if (e.source?.component !== "endpoint-slice-controller") continue;
    const into = e.source?.host === IDENTITY || e.reportingInstance === IDENTITY ? ours : upstream;
    const key = `${e.type} ${e.reason}: ${e.message}`;
    const n = e.count ?? e.series?.count ?? 1;
    into.set(key, (into.get(key) ?? 0) + n);
  }
  return { ours, upstream };
}

function delta(now: Map<string, number>, before: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of [...now].sort(([x], [y]) => (x < y ? -1 : 1))) {
    const d = n - (before.get(key) ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}

interface Row {
  split: string;
  hints: Record<string, number>;
  events: Record<string, number>;
}

describe("topology-mode Auto, Pods moving between splits: ours next to upstream", { skip }, () => {
  let cp: TestControlPlane;
  let api: Api;
  let app: App;
  let kcm: UpstreamSliceController;

  before(async () => {
    cp = await startControlPlane();
    api = new Api(cp.server, cp.stateDir);
    for (const n of NODES) await createNode(api, n.name, n.zone, "2");
    kcm = startUpstreamSliceController(cp.stateDir);
    app = await startApp(
      {
        ...DEFAULT_FLAGS,
        kubeconfig: cp.kubeconfigPath,
        leaderElect: false,
        metricsBindAddress: "127.0.0.1:0",
      },
      { logger: discardLogger, identity: IDENTITY, sliceControllerName: OURS },
    );
  });

  after(async () => {
    await app?.stop();
    await kcm?.stop();
    api?.close();
    await cp?.stop();
  });

  /** Waits until both controllers show `total` ready endpoints for both Services and then write nothing for 3 s. */
  async function settled(total: number): Promise<{
    ours: EndpointSlice[];
    upstream: EndpointSlice[];
    reachedMs: { ours?: number; upstream?: number };
  }> {
    const start = Date.now();
    const deadline = start + 120_000;
    let last = "";
    let since = Date.now();
    // When each controller's slices first showed the step's end state (diagnostic only: timing).
    const reachedMs: { ours?: number; upstream?: number } = {};
    for (;;) {
      const all = await Promise.all(
        ["auto", "same-zone"].flatMap((svc) => [slicesOf(api, svc, OURS), slicesOf(api, svc, UPSTREAM)]),
      );
      const fingerprint = all
        .flat()
        .map((s) => `${s.metadata?.name}@${s.metadata?.resourceVersion}`)
        .sort()
        .join(",");
      const done = all.map((slices) => {
        const endpoints = slices.flatMap((s) => s.endpoints);
        return (
          slices.length > 0 &&
          endpoints.length === total &&
          endpoints.every((e) => e.conditions?.ready === true)
        );
      });
      if (done[0] && done[2]) reachedMs.ours ??= Date.now() - start;
      if (done[1] && done[3]) reachedMs.upstream ??= Date.now() - start;
      const complete = done.every(Boolean);
      if (fingerprint !== last) {
        last = fingerprint;
        since = Date.now();
      } else if (complete && Date.now() - since >= 3000) {
        return { ours: all[0] ?? [], upstream: all[1] ?? [], reachedMs };
      }
      if (Date.now() > deadline) {
        throw new Error(
          `slices did not settle at ${total} ready endpoints\n--- kube-controller-manager:\n${logTail(kcm.logPath)}`,
        );
      }
      await sleep(250);
    }
  }

  test("2:20 → 5:17 → 11:11, then 2 ↔ 3 endpoints: same hints and same Events after every step", async (t) => {
    await createNamespace(api, NS);
    const service = (name: string, extra: object, annotations?: Record<string, string>) =>
      api.post(`/api/v1/namespaces/${NS}/services`, {
        metadata: { name, ...(annotations ? { annotations } : {}) },
        spec: { selector: { app: "auto" }, ports: [{ port: 80, targetPort: 8080 }], ...extra },
      });
    await service("auto", {}, { "service.kubernetes.io/topology-mode": "Auto" });
    await service("same-zone", { trafficDistribution: "PreferSameZone" });

    const pods = new Pods(api);
    const ours: Row[] = [];
    const upstream: Row[] = [];
    let before = { ours: new Map<string, number>(), upstream: new Map<string, number>() };
    for (const [a, b] of [[0, 0], ...STEPS] as Array<[number, number]>) {
      await pods.setSplit(a, b);
      const slices = await settled(a + b);
      const events = await hintEvents(api);
      const split = `${a}:${b}`;
      ours.push({ split, hints: hintSummary(slices.ours), events: delta(events.ours, before.ours) });
      upstream.push({
        split,
        hints: hintSummary(slices.upstream),
        events: delta(events.upstream, before.upstream),
      });
      before = events;
      t.diagnostic(`${split} end state reached after ${JSON.stringify(slices.reachedMs)} ms`);
      t.diagnostic(`${split} ours ${JSON.stringify(ours.at(-1))}`);
      t.diagnostic(`${split} upstream ${JSON.stringify(upstream.at(-1))}`);
    }
    const metrics = await (await fetch(`http://${app.metricsAddress}/metrics`)).text();
    const stale = /^endpoint_slice_controller_syncs\{result="stale"\} (\S+)$/m.exec(metrics)?.[1];
    t.diagnostic(`our syncs refused on a stale cache: ${stale ?? 0}`);
    // Settled hints do not depend on timing: they must be the same after every step.
    assert.deepEqual(
      ours.map((r) => [r.split, r.hints]),
      upstream.map((r) => [r.split, r.hints]),
    );
    // Which Events a step records does: how many syncs see each intermediate count, and when the
    // Warning budget (25 per Service) runs out. A flap from 2 to 3 endpoints is one Pod, though: hints
    // come back and both controllers must say so, whatever Warnings came before.
    const enabled = (rows: Row[]) =>
      rows.map((r) => [
        r.split,
        Object.keys(r.events).some((k) => k.startsWith("Normal TopologyAwareHintsEnabled")),
      ]);
    const flaps = (rows: Row[]) => enabled(rows).slice(5);
    assert.deepEqual(flaps(ours), flaps(upstream));
    assert.ok(
      flaps(upstream).every(([split, on]) => on === (split === "1:2")),
      `upstream recorded TopologyAwareHintsEnabled exactly when hints came back: ${JSON.stringify(flaps(upstream))}`,
    );
  });
});
