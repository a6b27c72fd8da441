// Differential test against upstream: each scenario is built through a real kube-apiserver, upstream's
// EndpointSlice controller (kube-controller-manager v1.37.2 running only that controller) writes its
// slices, and our reconcile + finalize, fed the same objects as read back from the API, must produce
// the same slices with the same number of writes.
//
// Address plan: Nodes node-a (zone-a, 4 CPU), node-b (zone-b, 4 CPU), node-c (zone-c, 2 CPU); one
// namespace per scenario; Pod i gets 10.244.<i / 200>.<i % 200 + 2> and, when dual-stack,
// fd00:10:244::<i + 2>.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ApiError } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import {
  Api,
  controllerEvents,
  createNamespace,
  createNode,
  createPods,
  createService,
  deletePod,
  listSlices,
  logTail,
  missingControllerManager,
  missingControlPlane,
  type PodSpecOptions,
  readInputs,
  readyTransition,
  setPodReady,
  startUpstreamSliceController,
  type UpstreamSliceController,
} from "@switchyard/testbed";
import type { Container, Pod, ServiceSpec } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "../src/index.js";
import { comparable, hintFlows, layout, type OurResult, runOurs, withoutHints } from "./upstream/compare.js";
import { type ControlPlane, startDualStackControlPlane } from "./upstream/control-plane.js";
import { countSliceWrites, settledSlices, totalEndpoints, type WriteCounts } from "./upstream/observe.js";

const skip = missingControlPlane(["kube-controller-manager"]) ?? missingControllerManager();

const NODES = [
  { name: "node-a", zone: "zone-a", cpu: "4" },
  { name: "node-b", zone: "zone-b", cpu: "4" },
  { name: "node-c", zone: "zone-c", cpu: "2" },
] as const;

const ipv4 = (i: number) => `10.244.${Math.floor(i / 200)}.${(i % 200) + 2}`;
const ipv6 = (i: number) => `fd00:10:244::${(i + 2).toString(16)}`;

function pods(count: number, o: (i: number) => Partial<PodSpecOptions> = () => ({})): PodSpecOptions[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `pod-${i}`,
    node: NODES[i % NODES.length]?.name ?? "node-a",
    ips: [ipv4(i)],
    ...o(i),
  }));
}

const HTTP: ServiceSpec = {
  selector: { app: "web" },
  ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
};

interface Outcome {
  upstream: EndpointSlice[];
  upstreamWrites: WriteCounts;
  ours: OurResult;
}

describe("reconcile against upstream's EndpointSlice controller", { skip }, () => {
  let cp: ControlPlane;
  let api: Api;
  let kcm: UpstreamSliceController;

  before(async () => {
    cp = await startDualStackControlPlane();
    api = new Api(cp.server, cp.stateDir);
    for (const n of NODES) await createNode(api, n.name, n.zone, n.cpu);
    kcm = startUpstreamSliceController(cp.stateDir);
  });

  after(async () => {
    await kcm?.stop();
    api?.close();
    await cp?.stop();
  });

  /** Waits for upstream; on failure the controller's log tail says why. */
  async function settle(ns: string, name: string, endpoints: number): Promise<EndpointSlice[]> {
    try {
      return await settledSlices(api, ns, name, (s) => s.length > 0 && totalEndpoints(s) === endpoints);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- kube-controller-manager:\n${logTail(kcm.logPath)}`);
    }
  }

  /**
   * Pods first, the Service last, so upstream's first sync sees every Pod and writes each slice once;
   * then ours from no slices, with upstream's first-sync trigger time (the Service's creation).
   */
  async function fromScratch(
    ns: string,
    podSpecs: readonly PodSpecOptions[],
    spec: ServiceSpec,
    metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
    name = "web",
  ): Promise<Outcome> {
    await createNamespace(api, ns);
    await createPods(api, ns, podSpecs);
    const counter = await countSliceWrites(api, ns);
    const service = await createService(api, ns, name, spec, metadata);
    const family = spec.ipFamilies;
    const perPod = (p: PodSpecOptions) =>
      p.ips.filter((ip) => (family ?? ["IPv4"]).includes(ip.includes(":") ? "IPv6" : "IPv4")).length;
    const upstream = await settle(
      ns,
      name,
      podSpecs.reduce((n, p) => n + perPod(p), 0),
    );
    counter.stop();
    const input = await readInputs(api, ns, name);
    const ours = await runOurs(api, input, [], new Date(service.metadata?.creationTimestamp ?? 0));
    return { upstream, upstreamWrites: counter.counts(), ours };
  }

  function assertSame(o: Outcome, errors = 0): void {
    assert.equal(o.ours.errors.length, errors, o.ours.errors.join("; "));
    assert.deepEqual(comparable(o.ours.after), comparable(o.upstream));
    assert.deepEqual(o.ours.writes, o.upstreamWrites);
  }

  test("three ready Pods: one slice, created once", async () => {
    const o = await fromScratch("three", pods(3), HTTP, { labels: { tier: "front" } });
    assertSame(o);
    assert.equal(o.upstream.length, 1);
  });

  test("one Pod not ready, then another turning not ready: one update", async () => {
    const ns = "not-ready";
    const o = await fromScratch(
      ns,
      pods(3, (i) => ({ ready: i !== 1 })),
      HTTP,
    );
    assertSame(o);

    let changed: Date | undefined;
    const r = await changedLive(
      ns,
      "web",
      async () => {
        changed = readyTransition(await setPodReady(api, ns, "pod-2", [ipv4(2)], false));
      },
      (slices) =>
        slices.some((s) => s.endpoints.some((e) => e.targetRef?.name === "pod-2" && !e.conditions?.ready)),
      // Upstream's tracker takes the changed Pod's Ready transition as the trigger time.
      () => changed,
    );
    assertSameUpdate(r);
    assert.deepEqual(r.ours.writes, { create: 0, update: 1, delete: 0 });
  });

  test("a terminating Pod stays, serving but not ready, and the trigger time goes", async () => {
    const ns = "terminating";
    const o = await fromScratch(ns, pods(3), HTTP);
    assertSame(o);

    // Bound to a Node, the Pod waits for a kubelet that never comes, so it stays terminating. Its
    // Ready condition does not move, so upstream's tracker has no trigger time for this sync.
    const r = await changedLive(
      ns,
      "web",
      () => deletePod(api, ns, "pod-1", 30),
      (slices) => slices.some((s) => s.endpoints.some((e) => e.conditions?.terminating)),
    );
    assertSameUpdate(r);
    const pod1 = r.upstream.flatMap((s) => s.endpoints).find((e) => e.targetRef?.name === "pod-1");
    assert.deepEqual(pod1?.conditions, { ready: false, serving: true, terminating: true });
  });

  test("250 Pods: slices of exactly 100, 100 and 50", async () => {
    const o = await fromScratch("many", pods(250), HTTP);
    assertSame(o);
    assert.deepEqual(
      o.upstream.map((s) => s.endpoints.length).sort((a, b) => a - b),
      [50, 100, 100],
    );
  });

  test("scale down from 250 to 150: same slices kept, same writes", async () => {
    const r = await changedWhileDown(
      "many",
      "web",
      async () => {
        for (let i = 150; i < 250; i++) await deletePod(api, "many", `pod-${i}`, 0);
      },
      150,
    );
    assert.equal(totalEndpoints(r.before), 250);
    assertSameUpdate(r);
  });

  test("named targetPort: containers, sidecars, and Pods that do not resolve it", async () => {
    const port = (containerPort: number, protocol = "TCP") => [{ name: "web", containerPort, protocol }];
    const app = (ports: Container["ports"] = []): Container[] => [{ name: "app", image: "app:1", ports }];
    const shapes: Partial<PodSpecOptions>[] = [
      { containers: app(port(8080)) },
      { containers: app(port(8080)) },
      // A sidecar (restartable init container) exposes the port.
      {
        containers: app(),
        initContainers: [{ name: "proxy", image: "proxy:1", restartPolicy: "Always", ports: port(8081) }],
      },
      // A plain init container does not.
      { containers: app(), initContainers: [{ name: "init", image: "init:1", ports: port(8082) }] },
      // Nor does the right name with the wrong protocol.
      { containers: app(port(8083, "UDP")) },
    ];
    const spec: ServiceSpec = {
      selector: { app: "web" },
      ports: [
        { name: "http", port: 80, targetPort: "web", protocol: "TCP" },
        { name: "metrics", port: 9100, targetPort: 9100, protocol: "TCP" },
      ],
    };
    const o = await fromScratch(
      "named",
      pods(shapes.length, (i) => shapes[i] ?? {}),
      spec,
    );
    assertSame(o);
    const portSets = o.upstream.map((s) =>
      (s.ports ?? [])
        .map((p) => `${p.name}:${p.port}`)
        .sort()
        .join(","),
    );
    assert.deepEqual(portSets.sort(), ["http:8080,metrics:9100", "http:8081,metrics:9100", "metrics:9100"]);
  });

  test("headless Service: hostnames only for Pods in its subdomain", async () => {
    const o = await fromScratch(
      "headless",
      pods(4, (i) => ({
        hostname: `host-${i}`,
        ...(i < 2 ? { subdomain: "web" } : i === 2 ? { subdomain: "other" } : {}),
      })),
      { ...HTTP, clusterIP: "None" },
    );
    assertSame(o);
    const hostnames = comparable(o.upstream).endpoints.map((e) => e.hostname ?? "-");
    assert.deepEqual(hostnames, ["host-0", "host-1", "-", "-"]);
  });

  test("dual-stack Pods behind an IPv4 Service publish only their IPv4 address", async () => {
    const o = await fromScratch(
      "dual-pods",
      pods(3, (i) => ({ ips: [ipv4(i), ipv6(i)] })),
      HTTP,
    );
    assertSame(o);
    assert.deepEqual(
      o.upstream.map((s) => s.addressType),
      ["IPv4"],
    );
  });

  test("dual-stack headless Service: one slice per family", async (t) => {
    const spec: ServiceSpec = {
      ...HTTP,
      clusterIP: "None",
      ipFamilyPolicy: "RequireDualStack",
      ipFamilies: ["IPv4", "IPv6"],
    };
    try {
      const o = await fromScratch(
        "dual",
        pods(3, (i) => ({ ips: [ipv4(i), ipv6(i)] })),
        spec,
      );
      assertSame(o);
      assert.deepEqual(o.upstream.map((s) => s.addressType).sort(), ["IPv4", "IPv6"]);
    } catch (error) {
      // The lab's service CIDR is IPv4 only; the apiserver may refuse a second family outright.
      if (error instanceof ApiError && (error.code === 422 || error.code === 400)) {
        t.skip(`apiserver refuses dual-stack Services: ${error.message.slice(0, 200)}`);
        return;
      }
      throw error;
    }
  });

  for (const mode of ["PreferClose", "PreferSameNode"]) {
    test(`trafficDistribution ${mode}: ready endpoints hinted, others not`, async () => {
      const ns = mode.toLowerCase();
      const o = await fromScratch(
        ns,
        pods(4, (i) => ({ ready: i !== 3 })),
        {
          ...HTTP,
          trafficDistribution: mode,
        },
      );
      assertSame(o);
      const hinted = comparable(o.upstream).endpoints.filter((e) => e.hints !== undefined);
      assert.equal(hinted.length, 3);
      assert.equal(
        hinted.every((e) => (e.hints?.forNodes !== undefined) === (mode === "PreferSameNode")),
        true,
      );
    });
  }

  test("topology-mode Auto across three zones: CPU-weighted donations", async () => {
    const ns = "auto";
    // 6/2/2 endpoints against 40%/40%/20% of the CPU: zone-a must lend two endpoints to zone-b.
    const nodeOf = (i: number) => (i < 6 ? "node-a" : i < 8 ? "node-b" : "node-c");
    const o = await fromScratch(
      ns,
      pods(10, (i) => ({ node: nodeOf(i) })),
      HTTP,
      {
        annotations: { "service.kubernetes.io/topology-mode": "Auto" },
      },
    );
    assert.deepEqual(o.ours.errors, []);
    assert.deepEqual(comparable(withoutHints(o.ours.after)), comparable(withoutHints(o.upstream)));
    assert.deepEqual(hintFlows(o.ours.after), hintFlows(o.upstream));
    assert.deepEqual(hintFlows(o.upstream), {
      "zone-a>zone-a": 4,
      "zone-a>zone-b": 2,
      "zone-b>zone-b": 2,
      "zone-c>zone-c": 2,
    });
    assert.deepEqual(o.ours.writes, o.upstreamWrites);
    // Upstream records events asynchronously; wait for as many as we planned.
    const events = await eventually(
      `${o.ours.events.length} events of upstream's`,
      async () => {
        const seen = await controllerEvents(api, ns, "web");
        return seen.length >= o.ours.events.length ? seen : undefined;
      },
      { describe: async () => JSON.stringify(await controllerEvents(api, ns, "web"), null, 2) },
    );
    assert.deepEqual(events, o.ours.events);
  });

  test("scale up with one Pod turning not ready: its slice is topped up first, the rest fills or creates", async () => {
    const added = pods(290).slice(250);
    const r = await changedWhileDown(
      "many",
      "web",
      async () => {
        await setPodReady(api, "many", "pod-0", [ipv4(0)], false);
        await createPods(api, "many", added);
      },
      190,
    );
    assert.deepEqual(r.ours.writes, r.upstreamWrites);
    // Which new endpoint lands where is map order upstream; what each old slice keeps and how full
    // every slice ends up is not.
    assert.deepEqual(layout(r.ours.after, r.before, true), layout(r.upstream, r.before, true));
    assert.deepEqual(comparable(r.ours.after), comparable(r.upstream));
  });

  test("no Pods: a placeholder; the first Pods reuse it in one update", async () => {
    const o = await fromScratch("empty", [], HTTP);
    assertSame(o);
    // Upstream writes `ports: []`; the apiserver hands an empty list back as null.
    assert.equal(o.upstream[0]?.ports?.length ?? 0, 0);
    const r = await changedWhileDown("empty", "web", () => createPods(api, "empty", pods(3)), 3);
    assertSameUpdate(r);
    assert.deepEqual(r.ours.writes, { create: 0, update: 1, delete: 0 });
  });

  test("Service labels change: every slice is rewritten, without a trigger time", async () => {
    const r = await changedLive(
      "three",
      "web",
      async () => {
        await api.mergePatch("/api/v1/namespaces/three/services/web", {
          metadata: { labels: { tier: "back" } },
        });
      },
      (slices) => slices.every((s) => s.metadata?.labels?.tier === "back"),
    );
    assertSameUpdate(r);
  });

  test("a Pod on an unknown Node is skipped and reported", async () => {
    const podSpecs = pods(3, (i) => (i === 2 ? { node: "node-gone" } : {}));
    const o = await fromScratch("gone", podSpecs.slice(0, 2), HTTP);
    assertSame(o);
    // Upstream retries such a Service with backoff; its slices must not change meanwhile.
    const r = await changedWhileDown("gone", "web", () => createPods(api, "gone", podSpecs.slice(2)), 2);
    assert.equal(r.ours.errors.length, 1);
    assert.deepEqual(r.ours.writes, r.upstreamWrites);
    assert.deepEqual(comparable(r.ours.after), comparable(r.upstream));
  });

  test("publishNotReadyAddresses keeps a Pod on an unknown Node, without zone", async () => {
    const podSpecs = pods(3, (i) => ({ ready: i !== 0, ...(i === 2 ? { node: "node-gone" } : {}) }));
    const o = await fromScratch("gone-published", podSpecs, { ...HTTP, publishNotReadyAddresses: true });
    assertSame(o);
    const gone = o.upstream.flatMap((s) => s.endpoints).find((e) => e.nodeName === "node-gone");
    assert.equal(gone?.zone, undefined);
  });

  test("IPv4 Service becoming dual-stack and back: an IPv6 slice comes and goes", async () => {
    const path = "/api/v1/namespaces/dual-pods/services/web";
    const up = await changedLive(
      "dual-pods",
      "web",
      async () => {
        await api.mergePatch(path, {
          spec: { ipFamilyPolicy: "PreferDualStack", ipFamilies: ["IPv4", "IPv6"] },
        });
      },
      (slices) => slices.some((s) => s.addressType === "IPv6" && s.endpoints.length === 3),
    );
    assertSameUpdate(up);
    const down = await changedLive(
      "dual-pods",
      "web",
      async () => {
        await api.mergePatch(path, { spec: { ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv4"] } });
      },
      (slices) => slices.every((s) => s.addressType === "IPv4"),
    );
    assertSameUpdate(down);
    assert.deepEqual(down.ours.writes, { create: 0, update: 0, delete: 1 });
  });

  test("topology-mode Auto, one more Pod: hints rebalanced the same way", async () => {
    let created: Date | undefined;
    const r = await changedLive(
      "auto",
      "web",
      async () => {
        await createPods(api, "auto", [{ name: "pod-10", node: "node-c", ips: [ipv4(10)] }]);
        const pod = await api.get<Pod>("/api/v1/namespaces/auto/pods/pod-10");
        created = readyTransition(pod);
      },
      (slices) => totalEndpoints(slices) === 11,
      () => created,
    );
    assert.deepEqual(r.ours.writes, r.upstreamWrites);
    assert.deepEqual(comparable(withoutHints(r.ours.after)), comparable(withoutHints(r.upstream)));
    assert.deepEqual(hintFlows(r.ours.after), hintFlows(r.upstream));
  });

  /**
   * Applies `change` while upstream's controller is down, so that on restart it sees the whole change
   * in one sync as our single reconcile does. A restarted controller has no trigger-time history and
   * uses the Service's creation time.
   */
  async function changedWhileDown(
    ns: string,
    name: string,
    change: () => Promise<void>,
    endpoints: number,
  ): Promise<{
    before: EndpointSlice[];
    upstream: EndpointSlice[];
    upstreamWrites: WriteCounts;
    ours: OurResult;
  }> {
    const { slices: before } = await listSlices(api, ns, name);
    await kcm.stop();
    await change();
    const counter = await countSliceWrites(api, ns);
    kcm = startUpstreamSliceController(cp.stateDir);
    const upstream = await settle(ns, name, endpoints);
    counter.stop();
    const input = await readInputs(api, ns, name);
    const ours = await runOurs(api, input, before, new Date(input.service.metadata?.creationTimestamp ?? 0));
    return { before, upstream, upstreamWrites: counter.counts(), ours };
  }

  /** Applies `change` with upstream running; for changes that cost it exactly one effective sync. */
  async function changedLive(
    ns: string,
    name: string,
    change: () => Promise<void>,
    done: (slices: readonly EndpointSlice[]) => boolean,
    triggerTime?: () => Date | undefined,
  ): Promise<{
    before: EndpointSlice[];
    upstream: EndpointSlice[];
    upstreamWrites: WriteCounts;
    ours: OurResult;
  }> {
    const { slices: before } = await listSlices(api, ns, name);
    const counter = await countSliceWrites(api, ns);
    await change();
    const upstream = await settledSlices(api, ns, name, done);
    counter.stop();
    const ours = await runOurs(api, await readInputs(api, ns, name), before, triggerTime?.());
    return { before, upstream, upstreamWrites: counter.counts(), ours };
  }

  function assertSameUpdate(r: {
    before: EndpointSlice[];
    upstream: EndpointSlice[];
    upstreamWrites: WriteCounts;
    ours: OurResult;
  }): void {
    const { ours, upstream, upstreamWrites, before } = r;
    assert.deepEqual(ours.errors, []);
    assert.deepEqual(ours.writes, upstreamWrites);
    assert.deepEqual(layout(ours.after, before), layout(upstream, before));
    assert.deepEqual(comparable(ours.after), comparable(upstream));
  }
});
