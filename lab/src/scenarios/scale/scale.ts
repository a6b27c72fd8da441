import { realClock, sleep } from "@switchyard/kube";
import type { Pod } from "kubernetes-types/core/v1.js";
import { applyObjects } from "../../stack/apply.js";
import { isProxyMode, type ProxyMode } from "../../stack/manifests.js";
import { waitUntil } from "../../stack/wait.js";
import { proxyMetrics, syncCount, waitProxyQuiet } from "../kit/node-proxy.js";
import { connectTimes } from "../kit/probes.js";
import { fullSyncHistogram, histogram, metricSum, partialSyncHistogram, syncHistogram } from "../kit/prom.js";
import { freshProxyIn, nodeLabel, setNodeLabel, stopProxy } from "../kit/proxy-switch.js";
import {
  listParam,
  numberParam,
  type Scenario,
  type ScenarioContext,
  type ScenarioParam,
  stringParam,
} from "../kit/scenario.js";
import { type LabNode, labNode, openLab, type ScenarioLab } from "../kit/scenario-lab.js";
import { Undo } from "../kit/undo.js";
import {
  deleteNamespace,
  deployment,
  namespace,
  namespaceReady,
  podsOf,
  rolledOut,
} from "../kit/workloads.js";
import { type AtomicityResult, nftAtomicity } from "./atomicity.js";
import { NftMonitor, proxyWrites } from "./nft-monitor.js";
import {
  createServices,
  flipOneEndpoint,
  maxEndpoints,
  scaleNamespace as ns,
  serviceName,
} from "./scale-cluster.js";
import { dumpRules, rulesetShape } from "./scale-measure.js";
import { type ModeRun, scaleFindings, scaleLines } from "./scale-report.js";

/**
 * C19, C20, C4, C21, C22, C23 (and what C14/C18 mean here): N Services, measured on one node in iptables and
 * nftables mode: full sync (a fresh proxy's first), partial syncs after one-endpoint changes, rule lines and
 * bytes, first-packet latency to the first and the last Service, the load-balancing rule, an nftables
 * transaction with a broken statement, and the first sync's size.
 */
const params = {
  services: {
    key: "services",
    default: "1000",
    full: "1000,5000",
    help: "sizes, ascending; Services are added to reach each",
  },
  endpoints: { key: "endpoints", default: "10", help: "endpoints per Service" },
  modes: { key: "modes", default: "iptables,nftables", help: "the proxy modes measured, in order" },
  node: { key: "node", defaultText: "the first node that runs pods", help: "the node measured" },
  partials: { key: "partials", default: "5", help: "one-endpoint changes timed as partial syncs" },
  connects: { key: "connects", default: "100", help: "TCP connects timed per Service (first and last)" },
  others: {
    key: "others",
    default: "off",
    help: "off: the other nodes' proxies are stopped meanwhile, so the measured one has the CPU; keep: they stay",
  },
  syncTimeout: { key: "syncTimeout", default: "900", help: "seconds a full sync may take" },
} satisfies Record<string, ScenarioParam>;

export const scale: Scenario = {
  name: "scale",
  summary: "N Services on one node in iptables and nftables mode: syncs, rules, first packet, atomicity",
  claims: ["C19", "C20", "C4", "C21", "C22", "C23", "C14", "C18"],
  params: Object.values(params),
  async run(ctx: ScenarioContext) {
    const lab = await openLab(ctx, "scale");
    const sizes = listParam(ctx, params.services).map(Number);
    if (sizes.some((n) => !Number.isInteger(n) || n < 2))
      throw new Error(`scenario scale: --set services wants integers ≥ 2`);
    sizes.sort((a, b) => a - b);
    const perService = numberParam(ctx, params.endpoints);
    if ((sizes.at(-1) ?? 0) * perService > maxEndpoints)
      throw new Error(`scenario scale: services × endpoints must stay below ${maxEndpoints}`);
    const modes = listParam(ctx, params.modes);
    // Its claims are about rule sets; ebpf mode has maps instead, which it does not measure.
    for (const m of modes)
      if (!isProxyMode(m) || m === "ebpf")
        throw new Error(`scenario scale: --set modes: "${m}" is not iptables or nftables`);
    const o = {
      node: labNode(lab, stringParam(ctx, params.node, lab.nodes[0]?.name ?? "")),
      perService,
      partials: numberParam(ctx, params.partials),
      connects: numberParam(ctx, params.connects),
      syncTimeoutMs: numberParam(ctx, params.syncTimeout) * 1000,
    };
    const stopOthers = stringParam(ctx, params.others) === "off";
    // Workload goes before the proxies are put back, so a restored proxy does not sync thousands of Services.
    const proxyUndo = new Undo();
    const workUndo = new Undo();
    const runs: ModeRun[] = [];
    let atomicity: AtomicityResult | undefined;
    const restoreFailures: string[] = [];
    try {
      const labelBefore = await nodeLabel(lab, o.node.name);
      proxyUndo.push(`${o.node.name}'s proxy label (${labelBefore ?? "none"})`, () =>
        setNodeLabel(lab, o.node.name, labelBefore),
      );
      if (stopOthers)
        for (const n of lab.nodes)
          if (n.name !== o.node.name) {
            lab.progress.update(`stopping ${n.name}'s proxy for the duration (others=off)`, true);
            await stopProxy(lab, n, proxyUndo);
          }
      workUndo.push(`namespace ${ns} and its Services`, () =>
        deleteNamespace(lab.client, ns, lab.deadline(900_000), lab.progress),
      );
      const { real, client } = await setUp(lab, o.node);
      const clusterIps = new Map<number, string>();
      const flipped = new Map<number, boolean>();
      const realFor = new Map<number, string[]>();
      let created = 0;
      for (const n of sizes) {
        realFor.set(0, real);
        realFor.set(n - 1, real);
        lab.progress.update(`creating Services ${created}..${n - 1} with ${perService} endpoints each`, true);
        const ips = await createServices(
          lab.client,
          created,
          n,
          perService,
          realFor,
          (d) => lab.progress.update(`created ${created + d}/${n}`, true),
          // One Service with session affinity, to show the other form of the nftables picking rule.
          (i) => (i === 1 ? { sessionAffinity: "ClientIP" } : {}),
        );
        for (const [i, ip] of ips) clusterIps.set(i, ip);
        created = n;
        for (const mode of modes as ProxyMode[])
          runs.push(await measureMode(lab, o, n, mode, { clusterIps, flipped, client, proxyUndo }));
      }
      // netns: a scratch namespace of this host; kind: of the measured node's container (the host may be a VM's).
      atomicity = await nftAtomicity(
        lab.exec,
        lab.runtime === "kind" ? o.node.run : [],
        `${lab.prefix}-atomic`,
      );
    } finally {
      restoreFailures.push(...(await workUndo.run(lab.progress)), ...(await proxyUndo.run(lab.progress)));
      lab.close();
    }
    lab.progress.done("scale done");
    return {
      scenario: "scale",
      lines: scaleLines(runs, atomicity, o.node.name, perService, stopOthers, restoreFailures),
      findings: scaleFindings(runs, atomicity),
    };
  },
};

/** Echo servers for the first and last Service, and a client pod on the measured node. */
async function setUp(
  lab: ScenarioLab,
  node: LabNode,
): Promise<{ real: string[]; client: readonly string[] }> {
  await applyObjects(lab.client, [namespace(ns)]);
  await waitUntil("the namespace", () => namespaceReady(lab.client, ns), lab.deadline());
  await applyObjects(lab.client, [deployment(ns, "echo", 2, lab.images.echo)]);
  await lab.client.call("POST", `/api/v1/namespaces/${ns}/pods`, {
    metadata: { name: "client" },
    spec: {
      nodeName: node.name,
      terminationGracePeriodSeconds: 1,
      containers: [lab.nodeClient.container],
    },
  });
  await waitUntil("echo servers", () => rolledOut(lab.client, ns, "echo"), lab.deadline(), lab.progress);
  let client: readonly string[] = [];
  await waitUntil(
    "the client pod",
    async () => {
      const p = await lab.client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/client`);
      if (p.status?.phase !== "Running") return p.status?.phase ?? "pending";
      client = (await lab.nodeClient.node(p).catch(() => undefined)) ?? [];
      return client.length > 0 ? true : "not entered yet";
    },
    lab.deadline(),
    lab.progress,
  );
  const real = (await podsOf(lab.client, ns, "app=echo")).map((p) => p.status?.podIP ?? "").filter(Boolean);
  return { real, client };
}

interface Shared {
  clusterIps: Map<number, string>;
  flipped: Map<number, boolean>;
  client: readonly string[];
  proxyUndo: Undo;
}

async function measureMode(
  lab: ScenarioLab,
  o: { node: LabNode; perService: number; partials: number; connects: number; syncTimeoutMs: number },
  n: number,
  mode: ProxyMode,
  s: Shared,
): Promise<ModeRun> {
  const label = `${n} Services, ${mode}`;
  lab.progress.update(`${label}: a fresh proxy on ${o.node.name} (its first sync is the full sync)`, true);
  const t0 = Date.now();
  try {
    await withTimeout(
      freshProxyIn(lab, o.node, mode, s.proxyUndo),
      o.syncTimeoutMs,
      `no first sync within ${o.syncTimeoutMs / 1000}s`,
    );
  } catch (err) {
    return { services: n, mode, error: (err as Error).message };
  }
  const first = await proxyMetrics(lab.exec, o.node.run);
  const hist = histogram(first, mode === "iptables" ? fullSyncHistogram : syncHistogram);
  const readySeconds = (Date.now() - t0) / 1000;
  const rulesWritten = metricSum(first, "kubeproxy_sync_proxy_rules_iptables_last");
  await waitProxyQuiet(lab.exec, o.node, 2000, lab.deadline(o.syncTimeoutMs));
  const endpoints = n * o.perService;
  const shape = rulesetShape(
    await dumpRules(lab.exec, o.node, mode),
    mode,
    endpoints,
    { ns, name: serviceName(Math.floor(n / 2)), affinity: serviceName(1) },
    { first: s.clusterIps.get(0) ?? "", last: s.clusterIps.get(n - 1) ?? "" },
  );
  lab.progress.update(
    `${label}: full sync ${hist.sum.toFixed(2)}s; ${o.partials} one-endpoint changes`,
    true,
  );
  const partials: ModeRun["partials"] = [];
  for (let k = 0; k < o.partials; k++) {
    const i = Math.floor(n / 2) + 1 + k;
    const before = await proxyMetrics(lab.exec, o.node.run);
    // Only nftables mode needs it (iptables mode counts its own restored rules), and `nft monitor` starts slowly
    // or not at all next to tens of thousands of iptables-nft rules.
    const monitor = mode === "nftables" ? new NftMonitor(o.node.run) : undefined;
    const watching = await monitor?.ready(lab.exec).then(
      () => true,
      () => false,
    );
    const toAlt = !s.flipped.get(i);
    await flipOneEndpoint(lab.client, i, o.perService, toAlt);
    s.flipped.set(i, toAlt);
    const c0 = histogram(before, syncHistogram).count;
    await waitUntil(
      "a sync after the change",
      async () => ((await syncCount(lab.exec, o.node.run)) > c0 ? true : "none yet"),
      lab.deadline(),
    );
    const after = await proxyMetrics(lab.exec, o.node.run);
    const seen = await monitor?.stop();
    const writes = seen && watching ? proxyWrites(seen.lines) : { lines: Number.NaN, bytes: Number.NaN };
    const a = histogram(after, syncHistogram);
    const b = histogram(before, syncHistogram);
    const p = histogram(after, partialSyncHistogram).count - histogram(before, partialSyncHistogram).count;
    partials.push({
      seconds: (a.sum - b.sum) / Math.max(1, a.count - b.count),
      syncs: a.count - b.count,
      partial: mode === "iptables" ? p > 0 : undefined,
      rulesWritten:
        mode === "iptables" ? metricSum(after, "kubeproxy_sync_proxy_rules_iptables_last") : undefined,
      monitorLines: writes.lines,
      monitorBytes: writes.bytes,
    });
    await sleep(realClock, 1200);
  }
  lab.progress.update(`${label}: first-packet latency, ${o.connects} connects per Service`, true);
  const [firstUs = [], lastUs = []] = await connectTimes(
    lab.exec,
    s.client,
    [
      [s.clusterIps.get(0) ?? "", 9000],
      [s.clusterIps.get(n - 1) ?? "", 9000],
    ],
    o.connects,
  );
  return {
    services: n,
    mode,
    full: {
      seconds: hist.sum / Math.max(1, hist.count),
      exact: hist.count === 1,
      readySeconds,
      rulesWritten,
    },
    shape,
    partials,
    latency: { firstUs, lastUs },
  };
}

function withTimeout<T>(p: Promise<T>, ms: number, why: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(why)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (err) => {
        clearTimeout(t);
        reject(err);
      },
    );
  });
}
