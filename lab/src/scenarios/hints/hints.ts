import type { Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { proxyView } from "../../stack/proxy-measure.js";
import { runAt } from "../kit/pod-run.js";
import type {
  ClaimFinding,
  Scenario,
  ScenarioContext,
  ScenarioParam,
  ScenarioReport,
} from "../kit/scenario.js";
import { numberParam } from "../kit/scenario.js";
import type { LabNode } from "../kit/scenario-lab.js";
import { inNamespace, openLab, type ScenarioLab, serviceSlices } from "../kit/scenario-lab.js";
import {
  describeHints,
  nodeHints,
  type TopologyPath,
  topologyPath,
  zoneHints,
} from "../kit/topology-path.js";
import { formatAnswers, spread } from "./answer-stats.js";
import { namespace, type Params, perNodePod, podList, port, startWorkloads } from "./hints-setup.js";
import {
  busiestOverMean,
  c6Finding,
  c7Finding,
  c8Finding,
  c10Finding,
  c11Finding,
  c13Finding,
  type HintsSeen,
  type MissingHintsSeen,
  type OnePodSeen,
  type SkewSeen,
  type UniformitySeen,
} from "./hints-verdicts.js";
import { type Answers, answersFrom, proxiesCaughtUp, syncMark } from "./node-client.js";

const params = {
  connections: { key: "connections", default: "300", help: "connections per node and Service (at least 10)" },
  c13: {
    key: "c13-connections",
    default: "2000",
    help: "connections to the plain Service for C13 (at least 10)",
  },
  plainPods: {
    key: "plain-pods",
    default: "4",
    help: "endpoints of the plain Service for C13, one per node first (at least 2)",
  },
  skew: {
    key: "skew",
    default: "3",
    help: "how many times more connections the first node opens in the C11 run",
  },
} satisfies Record<string, ScenarioParam>;

export const hints: Scenario = {
  name: "hints",
  summary: "trafficDistribution hints: what the controller writes, what each node's proxy does with them",
  claims: ["C6", "C7", "C8", "C9", "C10", "C11", "C13"],
  params: Object.values(params),
  async run(ctx: ScenarioContext): Promise<ScenarioReport> {
    const p = {
      connections: Math.max(10, Math.floor(numberParam(ctx, params.connections))),
      c13: Math.max(10, Math.floor(numberParam(ctx, params.c13))),
      plainPods: Math.max(2, Math.floor(numberParam(ctx, params.plainPods))),
      skew: Math.max(1, Math.floor(numberParam(ctx, params.skew))),
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

async function measure(lab: ScenarioLab, p: Params): Promise<ScenarioReport> {
  const nodes = lab.nodes;
  const first = nodes[0] as LabNode;
  const workloads = await startWorkloads(lab, p);
  const mode = (await proxyView(lab.exec, first.run)).mode;
  const lines = [
    `${nodes.length} nodes (${nodes.map((n) => `${n.name}/${n.zone}`).join(", ")}), proxy mode ${mode || "?"}; echo pods: one per node${workloads.extras ? `, ${workloads.extras} more for the plain Service` : ""}`,
  ];

  const written = await controllerHints(lab);
  lines.push(...written.lines);
  const followed = await hintedTraffic(lab, p);
  lines.push(...followed.lines);
  const seen: HintsSeen = { ...written.seen, ...followed.seen };
  const missing = await missingHints(lab, p);
  lines.push(...missing.lines);
  const onePod = await onePodFallback(lab, p, written.hintsOf["one-pod"] ?? []);
  lines.push(...onePod.lines);
  const skew = await skewedLoad(lab, p, seen.sameNodeLocal);
  lines.push(...skew.lines);
  const uniform = await plainUniformity(lab, p, workloads.pods, workloads.plainCount, mode);
  lines.push(...uniform.lines);
  const findings = [
    c6Finding(seen),
    c7Finding(seen, nodes.length, new Set(nodes.map((n) => n.zone)).size),
    c8Finding(missing.seen),
    c10Finding(onePod.seen),
    c11Finding(skew.seen),
    c13Finding(uniform.seen),
  ];

  // C9 last: it makes pods unready.
  const c9 = await fallbackChain(lab, p, first);
  lines.push(...c9.lines);
  findings.push(c9.finding);
  findings.sort((a, b) => Number(a.claim.slice(1)) - Number(b.claim.slice(1)));
  return { scenario: "hints", lines, findings };
}

/** A measurement's report lines, and what it saw for the verdicts. */
type Measured<T> = { lines: string[]; seen: T };

type AnswersByNode = Map<string, Answers>;

async function serviceTarget(lab: ScenarioLab, name: string): Promise<string> {
  const svc = await lab.client.call<Service>("GET", `/api/v1/namespaces/${namespace}/services/${name}`);
  return `${svc.spec?.clusterIP}:${port}`;
}

/** Answers per pod for `connections` connections to the Service from each node in turn. */
async function answersPerNode(lab: ScenarioLab, name: string, connections: number): Promise<AnswersByNode> {
  const target = await serviceTarget(lab, name);
  const out: AnswersByNode = new Map();
  for (const n of lab.nodes) out.set(n.name, await answersFrom(lab, n, target, connections));
  return out;
}

function answerLines(title: string, t: AnswersByNode): string[] {
  const lines = [title];
  for (const [node, a] of t)
    lines.push(`  from ${node}: ${formatAnswers(a.answers)}${a.failures ? `; ${a.failures} failed` : ""}`);
  return lines;
}

/** Every node got answers only from the pods `allowed` names for it. */
function onlyFrom(
  nodes: readonly LabNode[],
  t: AnswersByNode,
  allowed: (node: LabNode) => string[],
): boolean {
  return nodes.every((n) =>
    Object.keys(t.get(n.name)?.answers ?? {}).every((pod) => allowed(n).includes(pod)),
  );
}

/** C6, C7: the hints the controller wrote on each Service's slices. */
async function controllerHints(lab: ScenarioLab): Promise<
  Measured<Pick<HintsSeen, "nodeAndZone" | "zoneOnly" | "none" | "handHinted">> & {
    hintsOf: Record<string, EndpointSlice[]>;
  }
> {
  const lines: string[] = [];
  const hintsOf: Record<string, EndpointSlice[]> = {};
  for (const name of ["same-node", "same-zone", "plain", "one-pod"]) {
    hintsOf[name] = await serviceSlices(lab, namespace, name);
    lines.push(`hints on ${name}'s slices:`, ...describeHints(hintsOf[name] ?? []).map((l) => `  ${l}`));
  }
  const eps = (name: string) => (hintsOf[name] ?? []).flatMap((s) => s.endpoints ?? []);
  const seen = {
    nodeAndZone: eps("same-node").every((e) => nodeHints(e).length > 0 && zoneHints(e).length > 0),
    zoneOnly: eps("same-zone").every((e) => nodeHints(e).length === 0 && zoneHints(e).length > 0),
    none: eps("plain").every((e) => !e.hints),
    handHinted: await serviceView(lab, "hand-hinted"),
  };
  return { lines, seen, hintsOf };
}

/** C6: traffic per node for the controller's hinted Services, and for node hints written by hand. */
async function hintedTraffic(
  lab: ScenarioLab,
  p: Params,
): Promise<Measured<Pick<HintsSeen, "proxyReadsHints" | "sameNodeLocal" | "sameZoneLocal">>> {
  const nodes = lab.nodes;
  lab.progress.update("counting answers per node: same-node, same-zone, hand-written slices", true);
  const sameNode = await answersPerNode(lab, "same-node", p.connections);
  const lines = answerLines(
    `same-node (PreferSameNode), ${p.connections} connections from each node:`,
    sameNode,
  );
  const sameZone = await answersPerNode(lab, "same-zone", p.connections);
  lines.push(
    ...answerLines(`same-zone (PreferSameZone), ${p.connections} connections from each node:`, sameZone),
  );
  const sameNodeLocal = onlyFrom(nodes, sameNode, (n) => [perNodePod(n)]);
  const sameZoneLocal = onlyFrom(nodes, sameZone, (n) =>
    nodes.filter((m) => m.zone === n.zone).map(perNodePod),
  );
  const handT = await answersPerNode(lab, "hand-hinted", p.connections);
  lines.push(
    ...answerLines(
      "hand-hinted (selectorless, no trafficDistribution, every endpoint hinted by hand):",
      handT,
    ),
  );
  const proxyReadsHints = onlyFrom(nodes, handT, (n) => [perNodePod(n)]);
  return { lines, seen: { proxyReadsHints, sameNodeLocal, sameZoneLocal } };
}

/** C8: the hand-written slices where the last node's endpoint lacks its node hint, or every hint. */
async function missingHints(lab: ScenarioLab, p: Params): Promise<Measured<MissingHintsSeen>> {
  const nodes = lab.nodes;
  const zonesOnly = await answersPerNode(lab, "hand-zones-only", p.connections);
  const lines = answerLines(
    `hand-zones-only (every endpoint has a zone hint; ${nodes.at(-1)?.name}'s lacks a node hint):`,
    zonesOnly,
  );
  const mixed = await answersPerNode(lab, "hand-mixed", p.connections);
  lines.push(...answerLines(`hand-mixed (${nodes.at(-1)?.name}'s endpoint has no hints at all):`, mixed));
  const spreadAll =
    onlyFrom(nodes, mixed, () => nodes.map(perNodePod)) &&
    nodes.every((n) => Object.keys(mixed.get(n.name)?.answers ?? {}).length === nodes.length);
  const fellToZone = onlyFrom(nodes, zonesOnly, (n) =>
    nodes.filter((m) => m.zone === n.zone).map(perNodePod),
  );
  return { lines, seen: { spreadAll, fellToZone } };
}

/** C10: one pod, PreferSameNode: each node's path to it, and the answers. */
async function onePodFallback(
  lab: ScenarioLab,
  p: Params,
  slices: EndpointSlice[],
): Promise<Measured<OnePodSeen>> {
  const nodes = lab.nodes;
  const first = nodes[0] as LabNode;
  const paths = new Map<string, TopologyPath>(
    nodes.map((n) => [n.name, topologyPath(slices, n.name, n.zone)]),
  );
  const oneT = await answersPerNode(lab, "one-pod", Math.min(p.connections, 100));
  const local = [...paths.values()].filter((x) => x === "node").length;
  const byZone = [...paths.values()].filter((x) => x === "zone").length;
  const lines = [
    `one-pod (PreferSameNode, 1 pod on ${first.name}): path per node ${[...paths].map(([n, x]) => `${n}=${x}`).join(", ")}; answers ${[...oneT.values()].map((a) => formatAnswers(a.answers)).join(" | ")}`,
  ];
  return { lines, seen: { nodeCount: nodes.length, local, byZone } };
}

/** C11: the first node opens `skew` times the connections of each other node; answers summed over all nodes. */
async function skewedLoad(lab: ScenarioLab, p: Params, sameNodeLocal: boolean): Promise<Measured<SkewSeen>> {
  const nodes = lab.nodes;
  const first = nodes[0] as LabNode;
  lab.progress.update("C11: skewed load", true);
  const skewed = async (name: string) => {
    const target = await serviceTarget(lab, name);
    const total: Record<string, number> = {};
    for (const n of nodes) {
      const c = n === first ? p.connections * p.skew : p.connections;
      const a = await answersFrom(lab, n, target, c);
      for (const [pod, k] of Object.entries(a.answers)) total[pod] = (total[pod] ?? 0) + k;
    }
    return total;
  };
  const sameNode = await skewed("same-node");
  const sameZone = await skewed("same-zone");
  const hot = (t: Record<string, number>) => busiestOverMean(t, nodes.length);
  const lines = [
    `C11: ${first.name} opens ${p.skew}× the connections of the others:`,
    `  same-node: ${formatAnswers(sameNode)}; busiest pod at ${hot(sameNode).toFixed(2)}× the mean`,
    `  same-zone: ${formatAnswers(sameZone)}; busiest pod at ${hot(sameZone).toFixed(2)}× the mean`,
  ];
  const seen: SkewSeen = {
    node: first.name,
    skew: p.skew,
    nodeCount: nodes.length,
    localPod: perNodePod(first),
    sameNode,
    sameZone,
    sameNodeLocal,
  };
  return { lines, seen };
}

/** C13: many connections to the plain Service from the first node, against a uniform pick. */
async function plainUniformity(
  lab: ScenarioLab,
  p: Params,
  pods: Pod[],
  plainCount: number,
  mode: string,
): Promise<Measured<UniformitySeen>> {
  const first = lab.nodes[0] as LabNode;
  lab.progress.update(`C13: ${p.c13} connections to the plain Service from ${first.name}`, true);
  const c13 = await answersFrom(lab, first, await serviceTarget(lab, "plain"), p.c13);
  const counts = pods
    .filter((x) => x.metadata?.labels?.app === "echo")
    .map((x) => c13.answers[x.metadata?.name ?? ""] ?? 0);
  const s = spread(counts);
  const probabilities = await ruleProbabilities(lab, first, "plain");
  const lines = [
    `C13: ${p.c13} connections from ${first.name} to plain (${plainCount} endpoints): ${formatAnswers(c13.answers)}`,
    `  chi-square ${s.chiSquare.toFixed(2)} (df ${s.n - 1}, p = ${s.pValue.toFixed(3)}), largest deviation from 1/${s.n}: ${(s.maxRelativeDeviation * 100).toFixed(1)}%`,
    probabilities.length
      ? `  the node's rules pick with probabilities ${probabilities.join(", ")} (then the last endpoint unconditionally)`
      : `  no probability rules found (${mode} mode)`,
  ];
  return { lines, seen: { spread: s, probabilities, mode, failures: c13.failures } };
}

async function serviceView(lab: ScenarioLab, name: string): Promise<string> {
  const svc = await lab.client.call<Service>("GET", `/api/v1/namespaces/${namespace}/services/${name}`);
  return `trafficDistribution ${svc.spec?.trafficDistribution ?? "unset"}`;
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
