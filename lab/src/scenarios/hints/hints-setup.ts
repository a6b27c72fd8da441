import type { Pod } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { LabNode, ScenarioLab } from "../kit/scenario-lab.js";
import { serviceSlices } from "../kit/scenario-lab.js";
import { proxiesCaughtUp, syncMark } from "./node-client.js";

export const namespace = "switchyard-hints";
export const port = 9000;
const managedByUs = "scenarios.switchyard.dev";

/** How many endpoints the hints scenario runs, and how many connections each measurement opens. */
export type Params = { connections: number; c13: number; plainPods: number; skew: number };

export const perNodePod = (n: LabNode) => `echo-${n.name}`;

function echoPod(image: string, name: string, node: LabNode, labels: Record<string, string>): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { app: "echo", ...labels } },
    spec: {
      nodeSelector: { "kubernetes.io/hostname": node.name },
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: "echo",
          image,
          // Port 8080 only serves the probe, so blocking it makes the pod unready while 9000 keeps answering (C9).
          readinessProbe: {
            httpGet: { path: "/", port: 8080 },
            periodSeconds: 1,
            failureThreshold: 1,
            timeoutSeconds: 1,
          },
        },
      ],
    },
  };
}

/** The echo pods and Services the scenario measures, as they stand once every proxy has their hints. */
export interface HintsWorkloads {
  /** Echo pods beyond one per node, there only for the plain Service (C13). */
  extras: number;
  /** The plain Service's endpoints: one per node plus the extras. */
  plainCount: number;
  pods: Pod[];
}

/**
 * An echo pod per node (and extras), the Services under test, and slices written by hand; returns once the
 * controller has hinted its slices and every node's proxy has synced them.
 */
export async function startWorkloads(lab: ScenarioLab, p: Params): Promise<HintsWorkloads> {
  const { client, progress } = lab;
  const nodes = lab.nodes;
  const first = nodes[0] as LabNode;
  const post = (kind: string, body: unknown, api = "/api/v1") =>
    client.call("POST", `${api}/namespaces/${namespace}/${kind}`, body);

  progress.update("starting echo pods (one per node, and extra ones for the plain Service)", true);
  for (const n of nodes)
    await post("pods", echoPod(lab.images.echo, perNodePod(n), n, { role: "per-node", node: n.name }));
  const extras = Math.max(0, p.plainPods - nodes.length);
  for (let k = 0; k < extras; k++)
    await post("pods", echoPod(lab.images.echo, `echo-extra-${k}`, nodes[k % nodes.length] as LabNode, {}));
  const plainCount = nodes.length + extras;

  const service = (name: string, selector: Record<string, string> | undefined, td?: string) =>
    post("services", {
      metadata: { name },
      spec: {
        ...(selector ? { selector } : {}),
        ports: [{ name: "tcp", port, targetPort: port, protocol: "TCP" }],
        ...(td ? { trafficDistribution: td } : {}),
      },
    });
  await service("same-node", { role: "per-node" }, "PreferSameNode");
  await service("same-zone", { role: "per-node" }, "PreferSameZone");
  await service("plain", { app: "echo" });
  await service("one-pod", { role: "per-node", node: first.name }, "PreferSameNode");
  for (const name of ["hand-hinted", "hand-zones-only", "hand-mixed"]) await service(name, undefined);

  await lab.until(
    "echo pods ready",
    async () => {
      const pods = await podList(lab);
      const ready = pods.filter((x) =>
        x.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
      );
      return ready.length === nodes.length + extras ? true : `${ready.length}/${nodes.length + extras} ready`;
    },
    240_000,
  );
  const pods = await podList(lab);
  const ipOf = (name: string) => pods.find((x) => x.metadata?.name === name)?.status?.podIP ?? "";

  const mark = await syncMark(lab);
  // C8: slices written by hand for selectorless Services (another managed-by, so the controller leaves them).
  await writeHandSlices(lab, nodes, ipOf);
  await lab.until("hints on the controller's slices", async () => {
    const want: Array<[string, number]> = [
      ["same-node", nodes.length],
      ["same-zone", nodes.length],
      ["plain", plainCount],
      ["one-pod", 1],
    ];
    for (const [name, count] of want) {
      const ready = (await serviceSlices(lab, namespace, name))
        .flatMap((s) => s.endpoints ?? [])
        .filter((e) => e.conditions?.ready);
      if (ready.length !== count) return `${name}: ${ready.length}/${count} ready endpoints`;
      if (name !== "plain" && ready.some((e) => !e.hints)) return `${name}: hints missing`;
    }
    return true;
  });
  await proxiesCaughtUp(lab, mark);
  return { extras, plainCount, pods };
}

export async function podList(lab: ScenarioLab): Promise<Pod[]> {
  return (await lab.client.call<{ items: Pod[] }>("GET", `/api/v1/namespaces/${namespace}/pods`)).items;
}

/** Three selectorless Services' slices, written as an operator's tool would (another managed-by value). */
async function writeHandSlices(
  lab: ScenarioLab,
  nodes: LabNode[],
  ipOf: (pod: string) => string,
): Promise<void> {
  const last = nodes.at(-1)?.name;
  const slice = (
    service: string,
    hintsFor: (n: LabNode) => Record<string, unknown> | undefined,
  ): EndpointSlice => ({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${service}-by-hand`,
      labels: {
        "kubernetes.io/service-name": service,
        "endpointslice.kubernetes.io/managed-by": managedByUs,
      },
    },
    addressType: "IPv4",
    ports: [{ name: "tcp", port, protocol: "TCP" }],
    endpoints: nodes.map((n) => ({
      addresses: [ipOf(perNodePod(n))],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: n.name,
      zone: n.zone,
      targetRef: { kind: "Pod", namespace, name: perNodePod(n) },
      ...(hintsFor(n) ? { hints: hintsFor(n) } : {}),
    })),
  });
  const both = (n: LabNode) => ({ forNodes: [{ name: n.name }], forZones: [{ name: n.zone }] });
  for (const s of [
    slice("hand-hinted", both),
    slice("hand-zones-only", (n) => (n.name === last ? { forZones: [{ name: n.zone }] } : both(n))),
    slice("hand-mixed", (n) => (n.name === last ? undefined : both(n))),
  ])
    await lab.client.call("POST", `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`, s);
}
