import { type HttpRestClient, patchContentTypes, realClock, sleep } from "@switchyard/kube";
import { Progress, type ProgressSink } from "@switchyard/testbed/progress";
import type { ConfigMap, Pod } from "kubernetes-types/core/v1.js";
import type { LoadStats } from "../agent/loadgen-stats.js";
import { loadDelta } from "../agent/loadgen-stats.js";
import { type Exec, realExec } from "../exec.js";
import { repoRoot } from "../self.js";
import { applyObjects } from "../stack/apply.js";
import { modeConfigMap, modeDaemonSet, modeLabel, prepare } from "../stack/canary.js";
import { deploymentReady } from "../stack/deploy.js";
import {
  configMode,
  type KubeObject,
  labProxyDaemonSet,
  type ProxyMode,
  proxyModes,
} from "../stack/manifests.js";
import { leftovers, meanSyncMs, proxyView, ruleCounts } from "../stack/proxy-measure.js";
import { waitUntil } from "../stack/wait.js";
import { type MigrateLab, type MigrateNode, netnsMigrateLab } from "./migrate-lab.js";
import { MigrationProgressFile, migrationProgressPath } from "./progress-file.js";
import type { MigrationReport, NodeSwitch, TrafficDelta } from "./report.js";
import { trafficNamespace, trafficObjects } from "./workload.js";

/** How long traffic is counted after each switch unless `--settle` says otherwise. */
export const defaultSettleMs = 3000;

export interface MigrateOptions {
  stateDir: string;
  to: ProxyMode;
  /** Node names, switched one after the other; every node when undefined. */
  nodes?: string[];
  /** Traffic keeps being counted this long after each switch, for failures that come late. */
  settleMs?: number;
  timeoutMs?: number;
  out?: ProgressSink;
  exec?: Exec;
  /** The lab; the netns lab of stateDir when absent (kind's comes from migrate-lab.ts). */
  lab?: MigrateLab;
}

const proxyApps = ["kube-proxy", ...proxyModes.map((m) => `kube-proxy-${m}`)];

/**
 * Switches kube-proxy's mode node by node under traffic (stack/canary.ts says how), and measures each switch: traffic
 * failures per client node, sync time and rule counts before and after, the old mode's leftovers, its duration.
 */
export async function migrate(o: MigrateOptions): Promise<MigrationReport> {
  const lab = o.lab ?? netnsMigrateLab(o.stateDir);
  const exec = o.exec ?? realExec;
  const progress = new Progress("migrate", o.out ?? process.stderr);
  const deadline = () => Date.now() + (o.timeoutMs ?? 180_000);
  const nodes = (o.nodes ?? lab.nodes.map((n) => n.name)).map((name) => {
    const node = lab.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name} in this lab (${lab.nodes.map((n) => n.name).join(", ")})`);
    return node;
  });
  const client = lab.client;
  const started = Date.now();
  const podNodes = lab.nodes.filter((n) => n.runsPods);
  if (o.to === "ebpf" && lab.noEbpf) {
    client.close();
    throw new Error(`migrate --to ebpf: ${lab.noEbpf}`);
  }
  // Followed by `switchyard-lab dashboard`.
  const file = new MigrationProgressFile(
    migrationProgressPath(o.stateDir),
    o.to,
    nodes.map((n) => n.name),
  );
  try {
    if (lab.loadImages) {
      progress.update("the echo and traffic images: into the nodes that lack them", true);
      progress.update(await lab.loadImages(), true);
    }
    // ebpf mode on a node, now or after this run: its programs and pins are counted too (with bpftool where this
    // machine sees the nodes' cgroups).
    const ebpf = o.to === "ebpf" || (await anyNodeIn(exec, lab.nodes, "ebpf"));
    if (ebpf && lab.nodes.some((n) => n.bpf?.cgroup)) await needBpftool(exec);
    await startTraffic(lab, podNodes.length, deadline, progress);

    const ds = labProxyDaemonSet(repoRoot, lab.ebpf);
    file.phase("preparing");
    const prepareSeconds = await prepare(client, ds, lab.nodes, exec, deadline(), progress);

    const defaultMode = await ensureModeDaemonSet(client, ds, o.to);
    const report: MigrationReport = {
      to: o.to,
      prepareSeconds,
      totalSeconds: 0,
      switches: [],
      skipped: [],
    };
    const counts = (node: MigrateNode) => ruleCounts(exec, node.run, ebpf ? node.bpf : undefined);
    file.phase("switching");
    for (const node of nodes) {
      const before = await proxyView(exec, node.run);
      if (before.mode === o.to) {
        report.skipped.push(node.name);
        file.node(node.name, { state: "skipped", from: before.mode });
        continue;
      }
      progress.update(`switching ${node.name} from ${before.mode || "?"} to ${o.to}`, true);
      file.node(node.name, { state: "switching", from: before.mode || "?" });
      const rulesBefore = await counts(node);
      const trafficBefore = await lab.trafficStats();
      const t0 = Date.now();
      const label = o.to === defaultMode ? null : o.to;
      await client.call(
        "PATCH",
        `/api/v1/nodes/${node.name}`,
        { metadata: { labels: { [modeLabel]: label } } },
        patchContentTypes.merge,
      );
      await waitUntil(
        `${node.name}'s proxy in ${o.to} mode`,
        () => switched(client, exec, node, o.to),
        deadline(),
        progress,
      );
      const switchSeconds = (Date.now() - t0) / 1000;
      file.node(node.name, { state: "settling", switchSeconds });
      progress.update(
        `${node.name} switched in ${switchSeconds.toFixed(1)}s; counting traffic for ${(o.settleMs ?? defaultSettleMs) / 1000}s more`,
        true,
      );
      await sleep(realClock, o.settleMs ?? defaultSettleMs);
      const after = await proxyView(exec, node.run);
      const rulesAfter = await counts(node);
      const trafficAfter = await lab.trafficStats();
      const zero = { count: 0, sumSeconds: 0 };
      const sw: NodeSwitch = {
        node: node.name,
        from: before.mode || "?",
        to: o.to,
        switchSeconds,
        syncBeforeMs: meanSyncMs(zero, before.sync),
        syncAfterMs: meanSyncMs(zero, after.sync),
        rulesBefore,
        rulesAfter,
        leftovers: leftovers(rulesAfter, o.to),
        traffic: trafficBetween(trafficBefore, trafficAfter),
      };
      report.switches.push(sw);
      file.node(node.name, { state: "switched", leftovers: sw.leftovers, traffic: sw.traffic });
    }
    report.totalSeconds = (Date.now() - started) / 1000;
    progress.done(`${report.switches.length} node(s) on ${o.to}`);
    file.phase("done");
    return report;
  } catch (err) {
    file.phase("failed", (err as Error).message);
    throw err;
  } finally {
    client.close();
  }
}

/**
 * The mode's DaemonSet and ConfigMap (stack/canary.ts), unless `mode` is the original ConfigMap's, which labelled
 * nodes go back to by losing their label. Returns the original's mode.
 */
async function ensureModeDaemonSet(client: HttpRestClient, ds: KubeObject, mode: ProxyMode): Promise<string> {
  const cm = await client.call<ConfigMap>("GET", "/api/v1/namespaces/kube-system/configmaps/kube-proxy");
  const defaultMode = configMode(cm.data?.["config.conf"] ?? "");
  if (mode === defaultMode) return defaultMode;
  const cmObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "kube-proxy", namespace: "kube-system" },
    data: cm.data,
  };
  await applyObjects(client, [modeConfigMap(cmObject as KubeObject, mode), modeDaemonSet(ds, mode)]);
  return defaultMode;
}

/** One proxy pod on the node, running, serving the new mode and past its first sync. */
async function switched(
  client: HttpRestClient,
  exec: Exec,
  node: MigrateNode,
  mode: ProxyMode,
): Promise<true | string> {
  const pods = await client.call<{ items: Pod[] }>(
    "GET",
    `/api/v1/namespaces/kube-system/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${node.name}`)}`,
  );
  const proxies = pods.items.filter((p) => proxyApps.includes(p.metadata?.labels?.["k8s-app"] ?? ""));
  if (proxies.length !== 1) return `${proxies.length} proxy pods on the node`;
  const view = await proxyView(exec, node.run);
  if (view.mode !== mode) return `the proxy serves ${view.mode || "nothing"}`;
  return view.sync.count > 0 ? true : "no sync yet";
}

/** The echo servers and a traffic generator per node, started and counting. */
async function startTraffic(
  lab: MigrateLab,
  podNodes: number,
  deadline: () => number,
  progress: Progress,
): Promise<void> {
  progress.update("starting the traffic generators", true);
  await applyObjects(lab.client, trafficObjects(podNodes, lab.nodes));
  const echo = () => deploymentReady(lab.client, "echo", trafficNamespace);
  await waitUntil("echo servers", echo, deadline(), progress);
  await waitUntil("traffic generators", () => loadgensReady(lab, podNodes), deadline(), progress);
}

async function anyNodeIn(exec: Exec, nodes: readonly MigrateNode[], mode: ProxyMode): Promise<boolean> {
  for (const n of nodes) if ((await proxyView(exec, n.run)).mode === mode) return true;
  return false;
}

/** Counting ebpf mode's programs takes bpftool (proxy-measure.ts): said before anything changes. */
async function needBpftool(exec: Exec): Promise<void> {
  await exec(["bpftool", "version"]).catch(() => {
    throw new Error(
      "migrate counts ebpf mode's programs with bpftool, which is missing (apt-get install bpftool)",
    );
  });
}

async function loadgensReady(lab: MigrateLab, want: number): Promise<true | string> {
  const stats = await lab.trafficStats();
  const running = Object.values(stats).filter((s) => s.rounds > 0).length;
  return running >= want ? true : `${running}/${want} generating`;
}

function trafficBetween(
  before: Record<string, LoadStats>,
  after: Record<string, LoadStats>,
): Record<string, TrafficDelta> {
  const out: Record<string, TrafficDelta> = {};
  for (const [node, a] of Object.entries(after)) {
    const b = before[node];
    if (b && b.startedAt === a.startedAt) out[node] = loadDelta(b, a);
  }
  return out;
}
