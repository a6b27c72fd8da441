import { isNotFound } from "@switchyard/kube";
import { resolveBinary } from "@switchyard/testbed/upstream";
import type { Endpoints, Pod } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { HollowNodes, inPool } from "../kit/hollow-nodes.js";
import type {
  ClaimFinding,
  Scenario,
  ScenarioContext,
  ScenarioParam,
  ScenarioReport,
  Verdict,
} from "../kit/scenario.js";
import { numberParam } from "../kit/scenario.js";
import {
  allEndpoints,
  inNamespace,
  openLab,
  readyEndpoints,
  type ScenarioLab,
  serviceSlices,
} from "../kit/scenario-lab.js";
import { formatWrites, SliceWatch, type WriteCount, writes } from "../kit/slice-watch.js";
import { serviceFamilies } from "./service-families.js";
import {
  deletedOnScaleDown,
  describeFill,
  fills,
  jsonBytes,
  kib,
  sample,
  slicesByPortSet,
  uncappedEndpoints,
  untouched,
  versions,
} from "./slice-stats.js";

const namespace = "switchyard-slice-churn";
const service = "churn";
const pausePort = 8080;

const params = {
  pods: {
    key: "pods",
    default: "1000",
    full: "5000",
    help: "pause pods behind the Service",
  },
  perNode: {
    key: "pods-per-node",
    default: "110",
    help: "pods per hollow node (the kubelet's default max-pods)",
  },
  remove: { key: "remove", default: "0.3", help: "the share of the pods deleted for the scale-down (C2)" },
  trickle: { key: "trickle", default: "20", help: "how many pods the slow refill adds at a time (C2)" },
  c3Pods: {
    key: "c3-pods",
    defaultText: "a third of the pods, at most 300",
    help: "pods behind the two extra Services for port sets (C3)",
  },
  quietMs: {
    key: "quiet-ms",
    default: "2000",
    help: "no slice write for this long means the controller has settled",
  },
} satisfies Record<string, ScenarioParam>;

export const sliceChurn: Scenario = {
  name: "slice-churn",
  summary: "a big Service: slices, writes per pod deletion, refill after scale-down, port sets",
  claims: ["C1", "C2", "C3"],
  params: Object.values(params),
  async run(ctx: ScenarioContext): Promise<ScenarioReport> {
    const p = {
      pods: Math.floor(numberParam(ctx, params.pods)),
      perNode: Math.floor(numberParam(ctx, params.perNode)),
      remove: numberParam(ctx, params.remove),
      trickle: Math.max(1, Math.floor(numberParam(ctx, params.trickle))),
      quietMs: numberParam(ctx, params.quietMs),
    };
    const c3Pods = Math.floor(numberParam(ctx, params.c3Pods, Math.min(300, Math.floor(p.pods / 3))));
    if (p.pods < 2) throw new Error("scenario slice-churn: --set pods wants at least 2");
    const lab = await openLab(ctx, "slice-churn");
    const hollow = new HollowNodes(lab, namespace, p.perNode);
    let watch: SliceWatch | undefined;
    try {
      return await inNamespace(
        lab,
        namespace,
        async () => {
          watch = await SliceWatch.start(lab.client, namespace);
          return await measure(lab, hollow, watch, p, c3Pods);
        },
        async () => {
          watch?.stop();
          await hollow.remove();
        },
      );
    } finally {
      lab.close();
    }
  },
};

interface Params {
  pods: number;
  perNode: number;
  remove: number;
  trickle: number;
  quietMs: number;
}

function pausePod(image: string, name: string, c3: boolean, variant: number): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { app: service, ...(c3 ? { c3: "yes" } : {}) } },
    spec: {
      automountServiceAccountToken: false,
      containers: [
        {
          name: "pause",
          image,
          // Two variants of one named port: a Service targeting the name gets two port sets (C3).
          ports: [{ name: "web", containerPort: pausePort + variant }],
        },
      ],
    },
  };
}

/** What every step of the measurement shares: the lab, its hollow nodes, the slice watch, and the waits. */
interface Churn {
  lab: ScenarioLab;
  hollow: HollowNodes;
  watch: SliceWatch;
  p: Params;
  slicesOf: (name: string) => Promise<EndpointSlice[]>;
  /** Waits until the Service's slices hold `want` endpoints and the controller has gone quiet. */
  settle: (want: number, name?: string) => Promise<void>;
}

async function measure(
  lab: ScenarioLab,
  hollow: HollowNodes,
  watch: SliceWatch,
  p: Params,
  c3Pods: number,
): Promise<ScenarioReport> {
  const slicesOf = (name: string) => serviceSlices(lab, namespace, name);
  const churn: Churn = {
    lab,
    hollow,
    watch,
    p,
    slicesOf,
    settle: (want, name = service) =>
      watch.settle(async () => allEndpoints(await slicesOf(name)) === want, p.quietMs, lab.deadline(600_000)),
  };
  const created = await createPods(churn, c3Pods);
  const deletion = await deleteOnePod(churn, created.slices);
  const lines = [...created.lines, "", ...deletionLines(churn, deletion)];
  const findings = [c1Finding(churn.p, created, deletion)];

  // C3, measured now, before the scale-down changes the pods.
  lines.push("", ...(await portSetLines(lab, c3Pods)));
  const c3 = await c3Finding(lab, c3Pods);
  lines.push(...c3.lines);
  findings.push(c3.finding);

  const c2 = await scaleDownAndUp(churn, deletion, created.maxPerSlice);
  lines.push(...c2.lines);
  findings.push(c2.finding);
  return { scenario: "slice-churn", lines, findings };
}

/** A RequireDualStack Service over the C3 pods, made in a dual-stack cluster only (elsewhere it is refused). */
const dualService = "churn-dual-stack";

/**
 * The three Services: the big one, and two over the C3 pods (two numeric ports; one named port); in a dual-stack
 * cluster a fourth over the C3 pods, with a ClusterIP per family.
 */
async function createServices(lab: ScenarioLab): Promise<void> {
  const svc = (name: string, ports: unknown[], selector: Record<string, string>, extra = {}) =>
    lab.client.call("POST", `/api/v1/namespaces/${namespace}/services`, {
      metadata: { name },
      spec: { selector, ports, ...extra },
    });
  await svc(service, [{ name: "http", port: 80, targetPort: pausePort }], { app: service });
  const c3Selector = { app: service, c3: "yes" };
  await svc(
    "churn-two-ports",
    [
      { name: "http", port: 80, targetPort: pausePort },
      { name: "https", port: 443, targetPort: pausePort + 363 },
    ],
    c3Selector,
  );
  await svc("churn-named-port", [{ name: "http", port: 80, targetPort: "web" }], c3Selector);
  if ((await serviceFamilies(lab.client)).length === 2)
    await svc(dualService, [{ name: "http", port: 80, targetPort: pausePort }], c3Selector, {
      ipFamilyPolicy: "RequireDualStack",
    });
}

/** The Service's slices once every pod is published, and how full the controller packed them. */
interface Created {
  lines: string[];
  slices: EndpointSlice[];
  maxPerSlice: number;
  /** Slices a perfect packing needs: one per 100 endpoints. */
  expected: number;
}

/** Hollow nodes, the Services, then every pod, until the controller has published them all. */
async function createPods(churn: Churn, c3Pods: number): Promise<Created> {
  const { lab, hollow, watch, p } = churn;
  const { progress } = lab;
  const zones = [...new Set(lab.nodes.map((n) => n.zone))];
  const nodeCount = Math.ceil(p.pods / p.perNode) + 1;
  progress.update(`creating ${nodeCount} hollow nodes (${p.perNode} pods each)`, true);
  await hollow.start(nodeCount, zones);
  await createServices(lab);

  const started = Date.now();
  const pods = Array.from({ length: p.pods }, (_, i) =>
    pausePod(lab.images.pause, `churn-${i}`, i < c3Pods, i % 2),
  );
  let done = 0;
  const ticker = setInterval(() => progress.update(`pods: ${done}/${p.pods} created and Ready`, true), 5000);
  try {
    await inPool(pods, 16, async (pod) => {
      await hollow.runPods([pod], 1);
      done++;
    });
  } finally {
    clearInterval(ticker);
  }
  const podsSeconds = (Date.now() - started) / 1000;
  progress.update("waiting for the controller to publish every endpoint", true);
  await churn.settle(p.pods);
  const settledSeconds = (Date.now() - started) / 1000;
  const slices = await churn.slicesOf(service);
  const maxPerSlice = Math.max(100, ...fills(slices));
  const lines = [
    `${p.pods} pause pods on ${nodeCount} hollow nodes (${p.perNode} pods each, zones ${zones.join(", ")}): created and Ready in ${podsSeconds.toFixed(1)}s, all published in slices after ${settledSeconds.toFixed(1)}s`,
    `service ${service}: ${describeFill(slices, maxPerSlice)}; ${readyEndpoints(slices)} ready`,
    `  creating them took ${formatWrites(watch.count(0, service))}`,
  ];
  return { lines, slices, maxPerSlice, expected: Math.ceil(p.pods / 100) };
}

/** C1: one pod deleted, what the controller wrote, and what one Endpoints object would have weighed instead. */
interface Deletion {
  victim: string;
  deletedAt: number;
  /** The watch's mark just before the deletion. */
  mark: number;
  writes: WriteCount;
  /** The slices after the deletion. */
  slices: EndpointSlice[];
  sliceCount: number;
  kept: number;
  sliceBytes: number;
  sentBytes: number;
  livePods: Pod[];
  endpointsBytes: number;
  realEndpoints: Endpoints | undefined;
  realAddresses: number;
  overCapacity: string | undefined;
}

async function deleteOnePod(
  { lab, watch, p, settle, slicesOf }: Churn,
  published: EndpointSlice[],
): Promise<Deletion> {
  const { client, progress } = lab;
  const before = versions(published);
  const victim = `churn-${Math.floor(p.pods / 2)}`;
  progress.update(`deleting pod ${victim} (graceful, as kubectl delete does)`, true);
  const mark = watch.mark();
  const deletedAt = Date.now();
  await client.call("DELETE", `/api/v1/namespaces/${namespace}/pods/${victim}`);
  await settle(p.pods - 1);
  const deleteWrites = watch.count(mark, service);
  const slices = await slicesOf(service);
  const after = versions(slices);
  const written = [...deleteWrites.slices];
  const writtenSlice = slices.find((s) => s.metadata?.name === written[0]);
  const sentBytes = watch.events
    .slice(mark)
    .filter((e) => e.service === service)
    .reduce((n, e) => n + jsonBytes(e.slice), 0);
  const livePods = await client.call<{ items: Pod[] }>(
    "GET",
    `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`app=${service}`)}`,
  );
  const realEndpoints = await client
    .call<Endpoints>("GET", `/api/v1/namespaces/${namespace}/endpoints/${service}`)
    .catch((err) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
  return {
    victim,
    deletedAt,
    mark,
    writes: deleteWrites,
    slices,
    sliceCount: after.size,
    kept: untouched(before, after),
    sliceBytes: writtenSlice ? jsonBytes(writtenSlice) : 0,
    sentBytes,
    livePods: livePods.items,
    endpointsBytes: jsonBytes(uncappedEndpoints(namespace, service, livePods.items, pausePort)),
    realEndpoints,
    realAddresses: (realEndpoints?.subsets ?? []).reduce(
      (n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0),
      0,
    ),
    overCapacity: realEndpoints?.metadata?.annotations?.["endpoints.kubernetes.io/over-capacity"],
  };
}

function deletionLines({ lab, watch }: Churn, d: Deletion): string[] {
  const proxies = lab.nodes.length;
  return [
    `deleting pod ${d.victim}: ${formatWrites(d.writes)} within ${((watch.events.at(-1)?.at ?? d.deletedAt) - d.deletedAt) / 1000}s; ${d.kept} of ${d.sliceCount} slices untouched (same resourceVersion)`,
    ...watch.events
      .slice(d.mark)
      .filter((e) => e.service === service)
      .map(
        (e) =>
          `  ${e.type} ${e.name}: ${(e.slice.endpoints ?? []).length} endpoints, ${(e.slice.endpoints ?? []).filter((x) => x.conditions?.terminating).length} terminating, ${kib(jsonBytes(e.slice))}`,
      ),
    `bytes per node's proxy for this one deletion: ${kib(d.sentBytes)} of slices (${d.writes.modified + d.writes.added} event(s) of one ${kib(d.sliceBytes)} slice), × ${proxies} node(s)`,
    `the same change as one Endpoints object holding every address: ${kib(d.endpointsBytes)} per write (${d.livePods.length} addresses, JSON), × ${proxies} node(s)`,
    d.realEndpoints
      ? `the lab's endpoints controller (kube-controller-manager) wrote Endpoints ${service} with ${d.realAddresses} addresses, ${kib(jsonBytes(d.realEndpoints))}${d.overCapacity ? `, annotated over-capacity=${d.overCapacity}` : ""}`
      : `no Endpoints object ${service} exists (the endpoints controller is not running)`,
  ];
}

/** Holds when the deletion rewrote exactly one slice (no slice added or removed) and left every other alone. */
function c1Finding(p: Params, { maxPerSlice, expected }: Created, d: Deletion): ClaimFinding {
  const { slices, writes: w } = d;
  const oneSlice = w.slices.size === 1 && w.added === 0 && w.deleted === 0;
  return {
    claim: "C1",
    measured:
      `${slices.length} slices for ${p.pods} pods (expected ${expected} at ${maxPerSlice}/slice); one pod deleted: ` +
      `${w.slices.size} slice written (${writes(w)} writes), ${d.kept} untouched; ` +
      `${kib(d.sliceBytes)} per slice write vs ${kib(d.endpointsBytes)} for a ${d.livePods.length}-address Endpoints object`,
    verdict: oneSlice && d.kept === slices.length - 1 ? "holds" : "wrong",
    note:
      [
        writes(w) > 1
          ? `a graceful deletion writes the slice ${writes(w)} times (endpoint terminating, then removed)`
          : "",
        d.realEndpoints && d.overCapacity
          ? `today's endpoints controller caps Endpoints at ${d.realAddresses} addresses (over-capacity=${d.overCapacity}), so a ${d.livePods.length}-address Endpoints object no longer exists; its size is computed`
          : "",
        slices.length !== expected
          ? `${slices.length} slices, not ${expected}: pods became ready in batches and each batch was packed as it came (fullest ${fills(slices)[0]}, emptiest ${fills(slices).at(-1)})`
          : "",
      ]
        .filter(Boolean)
        .join("; ") || undefined,
  };
}

/** Free places left in the slices: how many endpoints fit without a new slice. */
const roomIn = (slices: EndpointSlice[], maxPerSlice: number) =>
  slices.reduce((n, s) => n + maxPerSlice - (s.endpoints ?? []).length, 0);

/** C2: scale down by a share of the pods, then back up: once in a burst, once a few at a time. */
async function scaleDownAndUp(
  churn: Churn,
  deletion: Deletion,
  maxPerSlice: number,
): Promise<{ lines: string[]; finding: ClaimFinding }> {
  const { lab, watch, p, settle, slicesOf } = churn;
  const alive = deletion.livePods
    .map((x) => x.metadata?.name ?? "")
    .filter((n) => n && n !== deletion.victim)
    .sort();
  const removeCount = Math.floor(alive.length * p.remove);
  const doomed = sample(alive.length, removeCount).map((i) => alive[i] as string);
  lab.progress.update(`scaling down: deleting ${removeCount} pods`, true);
  const m = watch.mark();
  await inPool(doomed, 16, (name) =>
    lab.client.call("DELETE", `/api/v1/namespaces/${namespace}/pods/${name}`).then(() => {}),
  );
  const want = alive.length - removeCount;
  await settle(want);
  const down = watch.count(m, service);
  const { emptied, merged } = deletedOnScaleDown(
    deletion.slices,
    watch.events.slice(m),
    service,
    new Set(doomed),
  );
  const slices = await slicesOf(service);
  const roomAfterDown = roomIn(slices, maxPerSlice);
  const lines = [
    "",
    `scale-down, ${removeCount} pods deleted (a ${Math.round(p.remove * 100)}% sample spread over the slices): ${formatWrites(down)}`,
    `  after: ${describeFill(slices, maxPerSlice)}; room left in existing slices: ${roomAfterDown}`,
  ];
  const up = await scaleBackUp(churn, removeCount, want, maxPerSlice);
  lines.push(...up.lines);
  const added = up.burst.writes.added + up.trickle.writes.added;
  const verdict = (): Verdict => {
    if (merged > 0) return "wrong";
    return added === 0 ? "holds" : "half right";
  };
  const finding: ClaimFinding = {
    claim: "C2",
    measured:
      `scale-down left ${slices.length} slices (${emptied} emptied and deleted, ${merged} merged), room ${roomAfterDown}; ` +
      `${up.burst.pods} pods at once: ${up.burst.writes.added} new slice(s), ${up.burst.writes.modified} update(s); ` +
      `${up.trickle.pods} pods ${p.trickle} at a time: ${up.trickle.writes.added} new slice(s), ${up.trickle.writes.modified} update(s) (room before: ${up.roomBeforeTrickle})`,
    verdict: verdict(),
    note:
      added === 0
        ? "half-empty slices stay; nothing is merged"
        : `nothing is merged, and most new endpoints went into existing slices, but ${added} new slice(s) were created while ${roomAfterDown}/${up.roomBeforeTrickle} places were free: ` +
          "new endpoints go into slices already being rewritten, then into one untouched slice only if it can take all that is left (under one slice's worth); otherwise into a new slice",
  };
  return { lines, finding };
}

/** Refills the `removed` pods: half at once, the rest `trickle` at a time, each batch published before the next. */
async function scaleBackUp(
  { lab, hollow, watch, p, settle, slicesOf }: Churn,
  removed: number,
  want: number,
  maxPerSlice: number,
) {
  const refill = async (names: string[]) =>
    inPool(names, 16, (n) => hollow.runPods([pausePod(lab.images.pause, n, false, 0)], 1));
  const burst = Math.floor(removed / 2);
  lab.progress.update(`scaling up: ${burst} pods at once`, true);
  let m = watch.mark();
  await refill(Array.from({ length: burst }, (_, i) => `churn-burst-${i}`));
  let published = want + burst;
  await settle(published);
  const up1 = watch.count(m, service);
  let slices = await slicesOf(service);
  const roomBeforeTrickle = roomIn(slices, maxPerSlice);
  const lines = [
    `scale-up, ${burst} pods at once: ${formatWrites(up1)}`,
    `  after: ${describeFill(slices, maxPerSlice)}`,
  ];

  const slow = removed - burst;
  lab.progress.update(`scaling up: ${slow} pods, ${p.trickle} at a time`, true);
  m = watch.mark();
  for (let i = 0; i < slow; i += p.trickle) {
    const names = Array.from({ length: Math.min(p.trickle, slow - i) }, (_, k) => `churn-trickle-${i + k}`);
    await refill(names);
    published += names.length;
    await settle(published);
  }
  const up2 = watch.count(m, service);
  slices = await slicesOf(service);
  lines.push(
    `scale-up, ${slow} pods ${p.trickle} at a time (each batch published before the next): ${formatWrites(up2)}`,
    `  after: ${describeFill(slices, maxPerSlice)}`,
  );
  return {
    lines,
    burst: { pods: burst, writes: up1 },
    trickle: { pods: slow, writes: up2 },
    roomBeforeTrickle,
  };
}

/** Slices per port set of the three Services. */
async function portSetLines(lab: ScenarioLab, c3Pods: number): Promise<string[]> {
  const out = [
    `port sets (C3), ${c3Pods} pods behind the two extra Services (half with port "web" = ${pausePort}, half ${pausePort + 1}):`,
  ];
  const dual = (await serviceFamilies(lab.client)).length === 2;
  for (const name of [service, "churn-two-ports", "churn-named-port", ...(dual ? [dualService] : [])]) {
    const slices = await serviceSlices(lab, namespace, name);
    const sets = slicesByPortSet(slices);
    out.push(
      `  ${name}: ${slices.length} slices in ${sets.size} port set(s): ${[...sets].map(([k, v]) => `[${k}] ${v.slices} slices/${v.endpoints} endpoints`).join("; ")}`,
    );
  }
  return out;
}

async function c3Finding(
  lab: ScenarioLab,
  c3Pods: number,
): Promise<{ lines: string[]; finding: ClaimFinding }> {
  const two = await serviceSlices(lab, namespace, "churn-two-ports");
  const named = await serviceSlices(lab, namespace, "churn-named-port");
  const perSet = Math.ceil(c3Pods / 2 / 100);
  const families = await serviceFamilies(lab.client);
  // The pods behind the C3 Services now (one of them may be the deleted one): what each family's slices must hold.
  const dual =
    families.length === 2
      ? dualStackSlices(await serviceSlices(lab, namespace, dualService), allEndpoints(two))
      : undefined;
  const kubectl = resolveBinary("kubectl").path;
  const lines: string[] = [];
  let counts = "";
  if (kubectl) {
    const kc = lab.kubeconfig;
    const sh = (cmd: string) => lab.exec(["sh", "-c", cmd]).then((o) => Number(o.trim()));
    const sliceLines = await sh(`${kubectl} --kubeconfig ${kc} get endpointslice -A | wc -l`);
    const services = await sh(`${kubectl} --kubeconfig ${kc} get service -A --no-headers | wc -l`);
    counts = `kubectl get endpointslice -A | wc -l = ${sliceLines} (header included) for ${services} Services`;
    lines.push(
      `  ${counts}${dual ? "" : `; the lab is ${families.join("") || "IPv4"}-only (single-stack service and pod CIDRs), so address families were not measured`}`,
    );
  }
  if (dual) lines.push(`  ${dual.measured}`);
  return {
    lines,
    finding: {
      claim: "C3",
      measured:
        `two ports with numeric targets: ${two.length} slice(s) (one port set); one named port resolving to 2 numbers: ` +
        `${named.length} slices in ${slicesByPortSet(named).size} port sets for ${c3Pods} pods` +
        `${dual ? `; ${dual.measured}` : ""}${counts ? `; ${counts}` : ""}`,
      verdict:
        slicesByPortSet(two).size === 1 && slicesByPortSet(named).size === 2 && (dual?.holds ?? true)
          ? "half right"
          : "wrong",
      note:
        `more ports alone do not add slices (every endpoint shares the port list); pods that resolve a named port ` +
        `differently do (${perSet}+${perSet} expected); a large Service alone also puts wc -l far above the ` +
        `number of Services without any fragmentation; ${dual ? dual.note : `dual-stack not measured (single-stack lab: up --ip-family dual measures it)`}`,
    },
  };
}

/**
 * The dual-stack Service's slices per address family: the controller cuts a set of slices per family, each holding
 * every pod's address of that family, so the Service has twice the slices of a single-stack one over the same pods.
 */
function dualStackSlices(slices: readonly EndpointSlice[], pods: number) {
  const per = (family: string) => slices.filter((s) => s.addressType === family);
  const [v4, v6] = [per("IPv4"), per("IPv6")];
  const endpoints = (xs: readonly EndpointSlice[]) => xs.reduce((n, s) => n + (s.endpoints ?? []).length, 0);
  const want = Math.ceil(pods / 100);
  const holds = v4.length === want && v6.length === want && endpoints(v4) === pods && endpoints(v6) === pods;
  return {
    holds,
    measured: `one RequireDualStack Service over ${pods} pods: ${v4.length} IPv4 slice(s) with ${endpoints(v4)} endpoints and ${v6.length} IPv6 slice(s) with ${endpoints(v6)}`,
    note: holds
      ? `dual-stack holds as claimed: one set of slices per address family (${want}+${want} for ${pods} pods), each endpoint once per family`
      : `dual-stack: expected ${want} slice(s) per family, each with all ${pods} endpoints`,
  };
}
