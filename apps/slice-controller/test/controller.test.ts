// The program in-process against a real kube-apiserver (no kube-controller-manager, so this is the
// only EndpointSlice controller): Pods get their status through /status as a kubelet would write it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { discardLogger } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import type { Event as CoreEvent, Endpoints } from "kubernetes-types/core/v1.js";
import { type App, DEFAULT_FLAGS, startApp } from "../src/index.js";
import {
  Api,
  createNamespace,
  createNode,
  createPod,
  createPods,
  createService,
  deletePod,
  endpointLines,
  type PodSpecOptions,
  setPodReady,
  sliceSizes,
  slicesOf,
  summary,
} from "./helpers.js";

const ZONES = ["zone-a", "zone-b", "zone-c"];
const NODES = ["node-a", "node-b", "node-c"];

function pods(count: number, ipBase: string, from = 0): PodSpecOptions[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `web-${from + i}`,
    node: NODES[(from + i) % NODES.length] ?? "node-a",
    ips: [`${ipBase}.${Math.floor((from + i) / 250)}.${((from + i) % 250) + 1}`],
  }));
}

const webSpec = { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] };

describe("slice controller on a real control plane", { skip: missingControlPlane() }, () => {
  let cp: TestControlPlane;
  let api: Api;
  let app: App;

  const waitSlices = async (ns: string, svc: string, check: (lines: string[], sizes: number[]) => boolean) =>
    eventually(
      `slices of ${ns}/${svc}`,
      async () => {
        const slices = await slicesOf(api, ns, svc);
        return check(endpointLines(slices), sliceSizes(slices)) ? slices : undefined;
      },
      { describe: async () => summary(await slicesOf(api, ns, svc)) },
    );

  before(async () => {
    cp = await startControlPlane();
    api = new Api(cp.server, cp.stateDir);
    for (const [i, name] of NODES.entries()) await createNode(api, name, ZONES[i] ?? "", "4");
    app = await startApp(
      {
        ...DEFAULT_FLAGS,
        kubeconfig: cp.kubeconfigPath,
        leaderElect: false,
        metricsBindAddress: "127.0.0.1:0",
      },
      { logger: discardLogger },
    );
  });

  after(async () => {
    await app?.stop();
    api?.close();
    await cp?.stop();
  });

  test("scales 0 → 250 → 5 → 0: placeholder, 100/100/50, one slice, placeholder", async () => {
    await createNamespace(api, "scale");
    await createService(api, "scale", "web", webSpec);
    const placeholder = await waitSlices(
      "scale",
      "web",
      (lines, sizes) => sizes.length === 1 && lines.length === 0,
    );
    assert.deepEqual(placeholder[0]?.ports ?? [], []);

    // How many syncs see a Deployment's Pods appear one by one is a matter of timing, and packing
    // depends on it (upstream's too). Here all 250 reach the Service in one change, a selector switch.
    await createPods(
      api,
      "scale",
      pods(250, "10.1").map((p) => ({ ...p, labels: { app: "web-v2" } })),
    );
    await api.mergePatch("/api/v1/namespaces/scale/services/web", { spec: { selector: { app: "web-v2" } } });
    const full = await waitSlices("scale", "web", (lines) => lines.length === 250);
    assert.deepEqual(sliceSizes(full), [100, 100, 50]);
    assert.ok(endpointLines(full).every((l) => l.endsWith(" RS-")));

    // Keep five Pods that share a slice: slices are never merged, so they must end up in one.
    const keep = new Set((full[0]?.endpoints ?? []).slice(0, 5).map((e) => e.targetRef?.name ?? ""));
    const doomed = pods(250, "10.1").filter((p) => !keep.has(p.name));
    for (let i = 0; i < doomed.length; i += 25) {
      await Promise.all(doomed.slice(i, i + 25).map((p) => deletePod(api, "scale", p.name, 0)));
    }
    const five = await waitSlices("scale", "web", (lines, sizes) => lines.length === 5 && sizes.length === 1);
    assert.deepEqual(new Set(five[0]?.endpoints?.map((e) => e.targetRef?.name)), keep);

    for (const name of keep) await deletePod(api, "scale", name, 0);
    const empty = await waitSlices(
      "scale",
      "web",
      (lines, sizes) => lines.length === 0 && sizes.length === 1,
    );
    assert.deepEqual(empty[0]?.ports ?? [], []);
  });

  test("readiness and termination show in the endpoint conditions", async () => {
    await createNamespace(api, "ready");
    await createService(api, "ready", "web", webSpec);
    const three = pods(3, "10.2");
    await createPods(api, "ready", three);
    await waitSlices("ready", "web", (lines) => lines.length === 3 && lines.every((l) => l.endsWith(" RS-")));

    await setPodReady(api, "ready", "web-0", three[0]?.ips ?? [], false);
    await waitSlices("ready", "web", (lines) => lines.includes("10.2.0.1 ---"));

    // Without a kubelet a graceful delete leaves the Pod terminating until forced.
    await deletePod(api, "ready", "web-1", 300);
    await waitSlices("ready", "web", (lines) => lines.includes("10.2.0.2 -ST"));
    await deletePod(api, "ready", "web-1", 0);
    const done = await waitSlices("ready", "web", (lines) => lines.length === 2);
    assert.deepEqual(endpointLines(done), ["10.2.0.1 ---", "10.2.0.3 RS-"]);
  });

  test("a changed targetPort rewrites the slice ports", async () => {
    await createNamespace(api, "ports");
    await createService(api, "ports", "web", webSpec);
    await createPods(api, "ports", pods(4, "10.3"));
    await waitSlices("ports", "web", (lines) => lines.length === 4);
    await api.mergePatch("/api/v1/namespaces/ports/services/web", {
      spec: { ports: [{ name: "http", port: 80, targetPort: 9090, protocol: "TCP" }] },
    });
    const slices = await eventually("port 9090", async () => {
      const s = await slicesOf(api, "ports", "web");
      return s.length === 1 && s[0]?.ports?.[0]?.port === 9090 ? s : undefined;
    });
    assert.equal(endpointLines(slices).length, 4);
  });

  test("headless Service: hostnames from hostname + subdomain, headless label", async () => {
    await createNamespace(api, "headless");
    await createService(api, "headless", "db", { clusterIP: "None", selector: { app: "db" } });
    for (let i = 0; i < 3; i++) {
      await createPod(api, "headless", {
        name: `db-${i}`,
        node: "node-a",
        ips: [`10.4.0.${i + 1}`],
        labels: { app: "db" },
        hostname: `db-${i}`,
        subdomain: i < 2 ? "db" : "other",
      });
    }
    const slices = await eventually("three db endpoints", async () => {
      const s = await slicesOf(api, "headless", "db");
      return endpointLines(s).length === 3 ? s : undefined;
    });
    assert.equal(slices[0]?.metadata?.labels?.["service.kubernetes.io/headless"], "");
    const hostnames = (slices[0]?.endpoints ?? [])
      .map((e) => `${e.targetRef?.name}=${e.hostname ?? ""}`)
      .sort();
    assert.deepEqual(hostnames, ["db-0=db-0", "db-1=db-1", "db-2="]);
  });

  test("topology-mode Auto over three zones hints each endpoint to its zone", async () => {
    await createNamespace(api, "auto");
    await createService(api, "auto", "web", webSpec, {
      annotations: { "service.kubernetes.io/topology-mode": "Auto" },
    });
    await createPods(api, "auto", pods(6, "10.5"));
    const slices = await eventually("hinted slices", async () => {
      const s = await slicesOf(api, "auto", "web");
      const eps = s.flatMap((x) => x.endpoints ?? []);
      return eps.length === 6 && eps.every((e) => e.hints?.forZones?.length === 1) ? s : undefined;
    });
    for (const e of slices.flatMap((s) => s.endpoints ?? [])) {
      assert.deepEqual(e.hints?.forZones, [{ name: e.zone }]);
    }
    const events = await eventually("TopologyAwareHintsEnabled event", async () => {
      const list = await api.get<{ items: CoreEvent[] }>("/api/v1/namespaces/auto/events");
      const ours = list.items.filter((e) => e.source?.component === "endpoint-slice-controller");
      return ours.some((e) => e.reason === "TopologyAwareHintsEnabled") ? ours : undefined;
    });
    assert.equal(events[0]?.involvedObject.kind, "Service");
  });

  test("trafficDistribution PreferSameNode hints zone and node", async () => {
    await createNamespace(api, "samenode");
    await createService(api, "samenode", "web", {
      ...webSpec,
      trafficDistribution: "PreferSameNode",
    } as never);
    await createPods(api, "samenode", pods(3, "10.6"));
    const slices = await eventually("node hints", async () => {
      const s = await slicesOf(api, "samenode", "web");
      const eps = s.flatMap((x) => x.endpoints ?? []);
      return eps.length === 3 && eps.every((e) => e.hints?.forNodes?.length === 1) ? s : undefined;
    });
    for (const e of slices.flatMap((s) => s.endpoints ?? [])) {
      assert.deepEqual(e.hints?.forNodes, [{ name: e.nodeName }]);
      assert.deepEqual(e.hints?.forZones, [{ name: e.zone }]);
    }
  });

  test("a slice deleted by someone else is put back", async () => {
    await createNamespace(api, "heal");
    await createService(api, "heal", "web", webSpec);
    await createPods(api, "heal", pods(2, "10.7"));
    const [slice] = await waitSlices("heal", "web", (lines) => lines.length === 2);
    await api.delete(`/apis/discovery.k8s.io/v1/namespaces/heal/endpointslices/${slice?.metadata?.name}`);
    const healed = await eventually("a new slice", async () => {
      const s = await slicesOf(api, "heal", "web");
      return s.length === 1 && s[0]?.metadata?.uid !== slice?.metadata?.uid && endpointLines(s).length === 2
        ? s
        : undefined;
    });
    assert.equal(healed.length, 1);
  });

  test("Endpoints of a selectorless Service are mirrored, and unmirrored when it is gone", async () => {
    await createNamespace(api, "mirror");
    await createService(api, "mirror", "ext", { ports: [{ port: 5432 }] });
    const endpoints: Endpoints = {
      metadata: { name: "ext", labels: { team: "db" } },
      subsets: [{ addresses: [{ ip: "192.0.2.10" }, { ip: "192.0.2.11" }], ports: [{ port: 5432 }] }],
    };
    await api.post("/api/v1/namespaces/mirror/endpoints", endpoints);
    const mirrored = await eventually("mirrored slice", async () => {
      const s = await slicesOf(api, "mirror", "ext");
      return endpointLines(s).length === 2 ? s : undefined;
    });
    const labels = mirrored[0]?.metadata?.labels ?? {};
    assert.equal(
      labels["endpointslice.kubernetes.io/managed-by"],
      "endpointslicemirroring-controller.k8s.io",
    );
    assert.equal(labels.team, "db");
    assert.equal(mirrored[0]?.metadata?.ownerReferences?.[0]?.kind, "Endpoints");

    await api.delete("/api/v1/namespaces/mirror/endpoints/ext");
    await eventually("mirrored slice removed", async () =>
      (await slicesOf(api, "mirror", "ext")).length === 0 ? true : undefined,
    );
  });

  test("metrics under upstream names, and readiness once synced", async () => {
    const base = `http://${app.metricsAddress}`;
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const text = await (await fetch(`${base}/metrics`)).text();
    for (const series of [
      'endpoint_slice_controller_syncs{result="success"}',
      'endpoint_slice_controller_changes{operation="create"}',
      "endpoint_slice_controller_endpoints_added_per_sync_bucket",
      'endpoint_slice_controller_endpointslices_changed_per_sync_count{topology="Auto",traffic_distribution=""}',
      'endpoint_slice_controller_services_count_by_traffic_distribution{traffic_distribution="PreferSameNode"} 1',
      'switchyard_endpointslice_fragmentation_ratio{namespace="heal",service="web"} 1',
      'workqueue_adds_total{name="endpoint_slice"}',
      'endpoint_slice_mirroring_controller_changes{operation="create"}',
    ]) {
      assert.ok(text.includes(series), `missing ${series}`);
    }
  });
});
