// A seeded churn of Pod changes for the resilience suites, and the endpoints the final Pods call for.
import { type EndpointSlice, finalize, LABEL_SERVICE_NAME, reconcile } from "@switchyard/slice-controller";
import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import { type Api, createPod, deletePod, endpointLines, SLICES, setPodReady } from "./helpers.js";

interface Live {
  ip: string;
  ready: boolean;
}

/** Creates, deletes and flips the readiness of Pods labelled app=web in one namespace. */
export class Churn {
  readonly #live = new Map<string, Live>();
  #next = 0;

  constructor(
    readonly api: Api,
    readonly namespace: string,
    readonly nodes: readonly string[],
    readonly ipPrefix: string,
    readonly random: () => number,
  ) {}

  /** A new ready Pod; `taken` keeps the rest of a batch off it until it exists. */
  async create(taken?: Set<string>): Promise<void> {
    const n = this.#next++;
    const name = `web-${n}`;
    taken?.add(name);
    const ip = `${this.ipPrefix}.${Math.floor(n / 250)}.${(n % 250) + 1}`;
    this.#live.set(name, { ip, ready: true });
    const node = this.nodes[n % this.nodes.length] ?? "";
    await createPod(this.api, this.namespace, { name, node, ips: [ip] });
  }

  /** `count` changes, `parallel` at a time, each batch touching distinct Pods. */
  async run(count: number, parallel = 10): Promise<void> {
    for (let done = 0; done < count; done += parallel) {
      const taken = new Set<string>();
      const batch: Promise<void>[] = [];
      for (let i = 0; i < Math.min(parallel, count - done); i++) batch.push(this.#one(taken));
      await Promise.all(batch);
    }
  }

  async #one(taken: Set<string>): Promise<void> {
    const names = [...this.#live.keys()].filter((n) => !taken.has(n));
    const roll = this.random();
    const name = names[Math.floor(this.random() * names.length)];
    if (name === undefined || roll < 0.3) return this.create(taken);
    taken.add(name);
    const pod = this.#live.get(name) as Live;
    if (roll < 0.6) {
      this.#live.delete(name);
      return deletePod(this.api, this.namespace, name, 0);
    }
    pod.ready = !pod.ready;
    await setPodReady(this.api, this.namespace, name, [pod.ip], pod.ready);
  }
}

/** The endpoint lines (see endpointLines) the Pods in the namespace call for, read from the API. */
export async function expectedLines(api: Api, namespace: string): Promise<string[]> {
  const list = await api.get<{ items: Pod[] }>(
    `/api/v1/namespaces/${namespace}/pods?labelSelector=app%3Dweb`,
  );
  return podLines(list.items);
}

/** The endpoint lines these Pods call for. */
function podLines(pods: readonly Pod[]): string[] {
  const lines: string[] = [];
  for (const pod of pods) {
    const ip = pod.status?.podIP;
    if (!ip || pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed") continue;
    const serving = pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
    const terminating = pod.metadata?.deletionTimestamp != null;
    lines.push(
      `${ip} ${serving && !terminating ? "R" : "-"}${serving ? "S" : "-"}${terminating ? "T" : "-"}`,
    );
  }
  return lines.sort();
}

/** Why the slices do not yet match the Pods, or undefined when they do. */
export function mismatch(
  slices: readonly EndpointSlice[],
  expected: readonly string[],
  max: number,
): string | undefined {
  const lines = endpointLines(slices);
  if (new Set(lines.map((l) => l.split(" ")[0])).size !== lines.length) return "an address is in two slices";
  if (slices.some((s) => (s.endpoints ?? []).length > max)) return `a slice holds more than ${max}`;
  if (JSON.stringify(lines) !== JSON.stringify(expected))
    return `have ${lines.length} endpoints, want ${expected.length}`;
  return undefined;
}

/**
 * Why the slices of a namespace whose Services each select `app: <service name>` (at most 100 Pods) are not
 * exactly what they should be, or undefined when they are: each Service's slices owned by the Service as it is
 * now, holding each selected Pod's endpoint once and nothing else, and nothing the controller's own reconcile of
 * that final state would still write; no slice for a Service that is not there. (Two slices where one would do
 * are allowed: the controller never merges slices, and neither does upstream's.)
 */
export async function namespaceMismatch(api: Api, namespace: string): Promise<string | undefined> {
  const [services, pods, nodes, slices] = await Promise.all([
    api.get<{ items: Service[] }>(`/api/v1/namespaces/${namespace}/services`),
    api.get<{ items: Pod[] }>(`/api/v1/namespaces/${namespace}/pods`),
    api.get<{ items: Node[] }>("/api/v1/nodes"),
    api.get<{ items: EndpointSlice[] }>(`${SLICES}/namespaces/${namespace}/endpointslices`),
  ]);
  const names = new Set(services.items.map((s) => s.metadata?.name));
  const stray = slices.items.filter((s) => !names.has(s.metadata?.labels?.[LABEL_SERVICE_NAME]));
  if (stray.length > 0) return `slices of no Service: ${stray.map((s) => s.metadata?.name).join(", ")}`;
  for (const service of services.items) {
    const name = service.metadata?.name ?? "";
    const own = slices.items.filter((s) => s.metadata?.labels?.[LABEL_SERVICE_NAME] === name);
    if (own.length === 0) return `${name}: no slice`;
    if (own.some((s) => s.metadata?.ownerReferences?.[0]?.uid !== service.metadata?.uid))
      return `${name}: a slice owned by an earlier ${name}`;
    const selected = pods.items.filter((p) => p.metadata?.labels?.app === name);
    const why = mismatch(own, podLines(selected), 100);
    if (why) return `${name}: ${why}\n${describeSlices(own)}`;
    const { operations } = finalize(
      reconcile({ service, pods: selected, nodes: nodes.items, existingSlices: own }),
    );
    if (operations.length > 0)
      return `${name}: reconcile would still ${operations.map((o) => o.verb).join(", ")}`;
  }
  return undefined;
}

function describeSlices(slices: readonly EndpointSlice[]): string {
  return slices
    .map(
      (s) =>
        `  ${s.metadata?.name} owner ${s.metadata?.ownerReferences?.[0]?.uid} generation ${s.metadata?.generation}: ${endpointLines([s]).join(", ")}`,
    )
    .join("\n");
}
