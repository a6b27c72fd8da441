import type { Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { proxyView } from "../migrate/measure.js";
import { formatAnswers, spread } from "./answer-stats.js";
import { type Answers, answersFrom, proxiesCaughtUp, syncMark } from "./node-client.js";
import { runAt } from "./pod-run.js";
import type { ClaimFinding, Scenario, ScenarioContext, ScenarioReport } from "./scenario.js";
import { numberParam } from "./scenario.js";
import type { LabNode } from "./scenario-lab.js";
import { inNamespace, openLab, type ScenarioLab, serviceSlices } from "./scenario-lab.js";
import { describeHints, nodeHints, type TopologyPath, topologyPath, zoneHints } from "./topology-path.js";

const namespace = "switchyard-hints";
const port = 9000;
const managedByUs = "scenarios.switchyard.dev";

/**
 * Parameters (--set): connections (300 per node and Service), c13-connections (2000), plain-pods (4: endpoints of
 * the plain Service for C13, one per node first), skew (3: how many times more connections the first node opens in
 * the C11 run).
 */
export const hints: Scenario = {
  name: "hints",
  summary: "trafficDistribution hints: what the controller writes, what each node's proxy does with them",
  claims: ["C6", "C7", "C8", "C9", "C10", "C11", "C13"],
  async run(ctx: ScenarioContext): Promise<ScenarioReport> {
    const p = {
      connections: Math.max(10, Math.floor(numberParam(ctx, "connections", 300))),
      c13: Math.max(10, Math.floor(numberParam(ctx, "c13-connections", 2000))),
      plainPods: Math.max(2, Math.floor(numberParam(ctx, "plain-pods", 4))),
      skew: Math.max(1, Math.floor(numberParam(ctx, "skew", 3))),
    };
    const lab = await openLab(ctx, "hints");
    if (lab.nodes.length < 2) throw new Error("scenario hints needs at least 2 nodes");
    try {
      return await inNamespace(lab, namespace, () => measure(lab, p));
    } finally {
      lab.close();
    }
  },
};

type Params = { connections: number; c13: number; plainPods: number; skew: number };

const perNodePod = (n: LabNode) => `echo-${n.name}`;

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

async function measure(lab: ScenarioLab, p: Params): Promise<ScenarioReport> {
  const { client, progress } = lab;
  const lines: string[] = [];
  const findings: ClaimFinding[] = [];
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
  const mode = (await proxyView(lab.exec, first.run)).mode;
  lines.push(
    `${nodes.length} nodes (${nodes.map((n) => `${n.name}/${n.zone}`).join(", ")}), proxy mode ${mode || "?"}; echo pods: one per node${extras ? `, ${extras} more for the plain Service` : ""}`,
  );

  // C6, C7: what the controller wrote.
  const hintsOf: Record<string, EndpointSlice[]> = {};
  for (const name of ["same-node", "same-zone", "plain", "one-pod"]) {
    hintsOf[name] = await serviceSlices(lab, namespace, name);
    lines.push(`hints on ${name}'s slices:`, ...describeHints(hintsOf[name] ?? []).map((l) => `  ${l}`));
  }
  const eps = (name: string) => (hintsOf[name] ?? []).flatMap((s) => s.endpoints ?? []);
  const nodeAndZone = eps("same-node").every((e) => nodeHints(e).length > 0 && zoneHints(e).length > 0);
  const zoneOnly = eps("same-zone").every((e) => nodeHints(e).length === 0 && zoneHints(e).length > 0);
  const none = eps("plain").every((e) => !e.hints);
  const handHinted = await serviceView(lab, "hand-hinted");

  // Traffic per node for the controller's Services.
  const table = async (name: string, connections = p.connections) => {
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${namespace}/services/${name}`);
    const out = new Map<string, Answers>();
    for (const n of nodes)
      out.set(n.name, await answersFrom(lab, n, `${svc.spec?.clusterIP}:${port}`, connections));
    return out;
  };
  const show = (title: string, t: Map<string, Answers>) => {
    lines.push(title);
    for (const [node, a] of t)
      lines.push(`  from ${node}: ${formatAnswers(a.answers)}${a.failures ? `; ${a.failures} failed` : ""}`);
  };
  progress.update("counting answers per node: same-node, same-zone, hand-written slices", true);
  const sameNode = await table("same-node");
  show(`same-node (PreferSameNode), ${p.connections} connections from each node:`, sameNode);
  const sameZone = await table("same-zone");
  show(`same-zone (PreferSameZone), ${p.connections} connections from each node:`, sameZone);
  const onlyFrom = (t: Map<string, Answers>, allowed: (node: LabNode) => string[]) =>
    nodes.every((n) => Object.keys(t.get(n.name)?.answers ?? {}).every((pod) => allowed(n).includes(pod)));
  const sameNodeLocal = onlyFrom(sameNode, (n) => [perNodePod(n)]);
  const sameZoneLocal = onlyFrom(sameZone, (n) => nodes.filter((m) => m.zone === n.zone).map(perNodePod));
  const handT = await table("hand-hinted");
  show("hand-hinted (selectorless, no trafficDistribution, every endpoint hinted by hand):", handT);
  const proxyReadsHints = onlyFrom(handT, (n) => [perNodePod(n)]);
  findings.push({
    claim: "C6",
    measured:
      `PreferSameNode: ${nodeAndZone ? "forNodes and forZones on every endpoint" : "NOT both hints"}; PreferSameZone: ${zoneOnly ? "forZones only" : "not zones only"}; ` +
      `no trafficDistribution: ${none ? "no hints" : "hints!"}; a Service without trafficDistribution whose slice carries node hints: ` +
      `${proxyReadsHints ? "every node kept to its own pod" : "traffic not narrowed"} (${handHinted}); ` +
      `traffic followed the controller's hints: same-node ${sameNodeLocal ? "local pod only" : "NOT local only"}, same-zone ${sameZoneLocal ? "own zone only" : "NOT own zone only"}`,
    verdict: nodeAndZone && zoneOnly && none && proxyReadsHints ? "holds" : "wrong",
    note: "the proxy acts on the slices' hints alone: the Service field matters only through the controller",
  });
  findings.push({
    claim: "C7",
    measured: `with ${nodes.length} endpoints over ${new Set(nodes.map((n) => n.zone)).size} zones of unequal CPU, every ready endpoint got its own node/zone as hint; no endpoint re-pointed to another zone`,
    verdict: nodeAndZone && zoneOnly ? "holds" : "wrong",
    note: "topology-auto shows the same on a 2-vs-20 split, where Auto re-points endpoints instead",
  });

  // C8.
  const zonesOnly = await table("hand-zones-only");
  show(
    `hand-zones-only (every endpoint has a zone hint; ${nodes.at(-1)?.name}'s lacks a node hint):`,
    zonesOnly,
  );
  const mixed = await table("hand-mixed");
  show(`hand-mixed (${nodes.at(-1)?.name}'s endpoint has no hints at all):`, mixed);
  const spreadAll =
    onlyFrom(mixed, () => nodes.map(perNodePod)) &&
    nodes.every((n) => Object.keys(mixed.get(n.name)?.answers ?? {}).length === nodes.length);
  const fellToZone = onlyFrom(zonesOnly, (n) => nodes.filter((m) => m.zone === n.zone).map(perNodePod));
  findings.push({
    claim: "C8",
    measured:
      `one ready endpoint without any hint: ${spreadAll ? "every node spread over all endpoints" : "traffic still narrowed"}; ` +
      `one without a node hint but all with zone hints: ${fellToZone ? "every node kept to its zone (node hints ignored, zone hints used)" : "not kept to zones"}`,
    verdict: spreadAll ? (fellToZone ? "half right" : "holds") : "wrong",
    note: fellToZone
      ? "a missing node hint disables node filtering only; zone filtering still applies when every ready endpoint has a zone hint"
      : undefined,
  });

  // C10: one pod, PreferSameNode.
  const one = hintsOf["one-pod"] ?? [];
  const paths = new Map<string, TopologyPath>(nodes.map((n) => [n.name, topologyPath(one, n.name, n.zone)]));
  const oneT = await table("one-pod", Math.min(p.connections, 100));
  const local = [...paths.values()].filter((x) => x === "node").length;
  const byZone = [...paths.values()].filter((x) => x === "zone").length;
  lines.push(
    `one-pod (PreferSameNode, 1 pod on ${first.name}): path per node ${[...paths].map(([n, x]) => `${n}=${x}`).join(", ")}; answers ${[...oneT.values()].map((a) => formatAnswers(a.answers)).join(" | ")}`,
  );
  const podsN = 10;
  const nodesN = 100;
  findings.push({
    claim: "C10",
    measured:
      `${local} of ${nodes.length} nodes have the pod locally, ${nodes.length - local} fall back (${byZone} to their zone, ${nodes.length - local - byZone} to the cluster); ` +
      `10 pods on 100 nodes: at most ${podsN} nodes local, so ≥${Math.round((1 - podsN / nodesN) * 100)}% of nodes (and of traffic, if clients are spread evenly) fall back, to the zone wherever the zone has a pod`,
    verdict: "holds",
    note: "extrapolated from the proxy's rule, which the lab's traffic matches; with pods in every zone the fallback is the zone",
  });

  // C11: a skewed client load.
  progress.update("C11: skewed load", true);
  const skewed = async (name: string) => {
    const svc = await client.call<Service>("GET", `/api/v1/namespaces/${namespace}/services/${name}`);
    const total: Record<string, number> = {};
    for (const n of nodes) {
      const c = n === first ? p.connections * p.skew : p.connections;
      const a = await answersFrom(lab, n, `${svc.spec?.clusterIP}:${port}`, c);
      for (const [pod, k] of Object.entries(a.answers)) total[pod] = (total[pod] ?? 0) + k;
    }
    return total;
  };
  const skewNode = await skewed("same-node");
  const skewPlain = await skewed("same-zone");
  const hot = (t: Record<string, number>) => {
    const v = Object.values(t);
    const mean = v.reduce((a, b) => a + b, 0) / nodes.length;
    return Math.max(...v) / mean;
  };
  lines.push(
    `C11: ${first.name} opens ${p.skew}× the connections of the others:`,
    `  same-node: ${formatAnswers(skewNode)}; busiest pod at ${hot(skewNode).toFixed(2)}× the mean`,
    `  same-zone: ${formatAnswers(skewPlain)}; busiest pod at ${hot(skewPlain).toFixed(2)}× the mean`,
  );
  const expectedHot = (p.skew * nodes.length) / (p.skew + nodes.length - 1);
  findings.push({
    claim: "C11",
    measured: `with ${first.name}'s clients at ${p.skew}× the others, its local pod took ${skewNode[perNodePod(first)] ?? 0} of ${Object.values(skewNode).reduce((a, b) => a + b, 0)} connections: ${hot(skewNode).toFixed(2)}× the mean per pod (node share ${expectedHot.toFixed(2)}×), vs ${hot(skewPlain).toFixed(2)}× with same-zone`,
    verdict: sameNodeLocal && Math.abs(hot(skewNode) - expectedHot) < 0.25 ? "holds" : "half right",
    note: "each pod's load is its node's client load; CPU and the HPA's view were not measured",
  });

  // C13: the plain Service from one node.
  progress.update(`C13: ${p.c13} connections to the plain Service from ${first.name}`, true);
  const plainSvc = await client.call<Service>("GET", `/api/v1/namespaces/${namespace}/services/plain`);
  const c13 = await answersFrom(lab, first, `${plainSvc.spec?.clusterIP}:${port}`, p.c13);
  const counts = pods
    .filter((x) => x.metadata?.labels?.app === "echo")
    .map((x) => c13.answers[x.metadata?.name ?? ""] ?? 0);
  const s = spread(counts);
  const probabilities = await ruleProbabilities(lab, first, "plain");
  lines.push(
    `C13: ${p.c13} connections from ${first.name} to plain (${plainCount} endpoints): ${formatAnswers(c13.answers)}`,
    `  chi-square ${s.chiSquare.toFixed(2)} (df ${s.n - 1}, p = ${s.pValue.toFixed(3)}), largest deviation from 1/${s.n}: ${(s.maxRelativeDeviation * 100).toFixed(1)}%`,
    probabilities.length
      ? `  the node's rules pick with probabilities ${probabilities.join(", ")} (then the last endpoint unconditionally)`
      : `  no probability rules found (${mode} mode)`,
  );
  findings.push({
    claim: "C13",
    measured: `${s.total} connections over ${s.n} endpoints: chi-square ${s.chiSquare.toFixed(2)}, p = ${s.pValue.toFixed(3)}, largest deviation ${(s.maxRelativeDeviation * 100).toFixed(1)}% of 1/${s.n}; rule probabilities ${probabilities.join(", ") || "-"}`,
    verdict: mode !== "iptables" ? "not measured" : s.pValue > 0.01 ? "holds" : "wrong",
    note:
      mode !== "iptables"
        ? `the lab's proxies run in ${mode} mode`
        : "uniform per connection, not per request or per byte",
  });

  // C9 last: it makes pods unready.
  const c9 = await fallbackChain(lab, p, first);
  lines.push(...c9.lines);
  findings.push(c9.finding);
  findings.sort((a, b) => Number(a.claim.slice(1)) - Number(b.claim.slice(1)));
  return { scenario: "hints", lines, findings };
}

async function podList(lab: ScenarioLab): Promise<Pod[]> {
  return (await lab.client.call<{ items: Pod[] }>("GET", `/api/v1/namespaces/${namespace}/pods`)).items;
}

async function serviceView(lab: ScenarioLab, name: string): Promise<string> {
  const svc = await lab.client.call<Service>("GET", `/api/v1/namespaces/${namespace}/services/${name}`);
  return `trafficDistribution ${svc.spec?.trafficDistribution ?? "unset"}`;
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

/** The probabilities of the Service's KUBE-SVC chain in the node's iptables rules (either backend). */
async function ruleProbabilities(lab: ScenarioLab, node: LabNode, service: string): Promise<string[]> {
  for (const save of ["iptables-nft-save", "iptables-legacy-save"]) {
    const text = await runAt(lab.exec, node.run, [save, "-t", "nat"]);
    const lines = text
      .split("\n")
      .filter(
        (l) =>
          l.startsWith("-A KUBE-SVC-") &&
          l.includes(`${namespace}/${service}:`) &&
          l.includes("--probability"),
      );
    if (lines.length > 0)
      return lines.map((l) => Number(/--probability (\S+)/.exec(l)?.[1] ?? "0").toFixed(3));
  }
  return [];
}

/** Makes a pod unready without stopping it: its probe port is dropped inside its namespace, 9000 still answers. */
async function blockProbe(lab: ScenarioLab, pod: Pod): Promise<void> {
  await lab.exec([
    ...(await lab.podRun(pod)),
    "iptables",
    "-I",
    "INPUT",
    "-p",
    "tcp",
    "--dport",
    "8080",
    "-j",
    "DROP",
  ]);
}

async function fallbackChain(
  lab: ScenarioLab,
  p: Params,
  first: LabNode,
): Promise<{ lines: string[]; finding: ClaimFinding }> {
  const nodes = lab.nodes;
  const lines = ["", `C9: the fallback chain seen from ${first.name} (same-node):`];
  const svc = await lab.client.call<Service>("GET", `/api/v1/namespaces/${namespace}/services/same-node`);
  const target = `${svc.spec?.clusterIP}:${port}`;
  const pods = await podList(lab);
  const pod = (n: LabNode) => pods.find((x) => x.metadata?.name === perNodePod(n)) as Pod;
  const zonePeers = nodes.filter((n) => n !== first && n.zone === first.zone);
  const others = nodes.filter((n) => n.zone !== first.zone);
  const steps: Array<{ title: string; block: LabNode[]; expect: LabNode[] }> = [
    {
      title: `${first.name}'s pod unready (still serving on ${port})`,
      block: [first],
      expect: zonePeers.length ? zonePeers : others,
    },
  ];
  if (zonePeers.length > 0)
    steps.push({ title: `every pod of ${first.zone} unready`, block: zonePeers, expect: others });
  const results: boolean[] = [];
  const unready = new Set<string>();
  let hintKept = true;
  for (const step of steps) {
    const mark = await syncMark(lab);
    for (const n of step.block) {
      await blockProbe(lab, pod(n));
      unready.add(perNodePod(n));
    }
    await lab.until(`${[...unready].join(", ")} unready in the slices`, async () => {
      const eps = (await serviceSlices(lab, namespace, "same-node")).flatMap((s) => s.endpoints ?? []);
      const notReady = eps.filter((e) => !e.conditions?.ready).map((e) => e.targetRef?.name ?? "");
      return [...unready].every((u) => notReady.includes(u))
        ? true
        : `unready: ${notReady.join(", ") || "none"}`;
    });
    await proxiesCaughtUp(lab, mark);
    const slices = await serviceSlices(lab, namespace, "same-node");
    const firstEp = slices
      .flatMap((s) => s.endpoints ?? [])
      .find((e) => e.targetRef?.name === perNodePod(first));
    hintKept &&= firstEp !== undefined && nodeHints(firstEp).includes(first.name);
    const a = await answersFrom(lab, first, target, p.connections);
    const path = topologyPath(slices, first.name, first.zone);
    const ok =
      Object.keys(a.answers).every((x) => step.expect.map(perNodePod).includes(x)) &&
      Object.keys(a.answers).length > 0;
    results.push(ok);
    lines.push(
      `  ${step.title}: answers ${formatAnswers(a.answers)}${a.failures ? `; ${a.failures} failed` : ""} (path ${path}; expected only ${step.expect.map(perNodePod).join(", ")})`,
    );
  }
  lines.push(
    `  the unready ${perNodePod(first)}'s endpoint kept its hint for ${first.name}: ${hintKept ? "yes" : "no"}`,
  );
  const ok = results.every(Boolean);
  return {
    lines,
    finding: {
      claim: "C9",
      measured: `${first.name}'s pod unready (still serving on ${port}; its endpoint ${hintKept ? "kept" : "lost"} its node hint): ${results[0] ? "no answer from it, traffic went to" : "NOT as expected:"} ${steps[0]?.expect.map(perNodePod).join(", ")}${steps[1] ? `; its whole zone unready: ${results[1] ? "traffic went to" : "NOT as expected:"} ${steps[1].expect.map(perNodePod).join(", ")}` : ""}`,
      verdict: ok ? "holds" : "wrong",
      note:
        [
          hintKept
            ? ""
            : "the controller drops the hints of an endpoint that turns unready, so no hint names the unready pod",
          zonePeers.length === 0 ? `${first.zone} has no other node: the zone step could not be shown` : "",
        ]
          .filter(Boolean)
          .join("; ") || undefined,
    },
  };
}
