import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { patchContentTypes, realClock, sleep } from "@switchyard/kube";
import type { ConfigMap, Pod } from "kubernetes-types/core/v1.js";
import { loadDelta } from "../../agent/loadgen-stats.js";
import { applyObjects } from "../../stack/apply.js";
import { waitUntil } from "../../stack/wait.js";
import { lameduckOf, withLameduck } from "../kit/corefile.js";
import { proxyMetrics } from "../kit/node-proxy.js";
import { histogram, programmingHistogram } from "../kit/prom.js";
import {
  type ClaimFinding,
  listParam,
  numberParam,
  type Scenario,
  type ScenarioContext,
  type ScenarioParam,
} from "../kit/scenario.js";
import { openLab, type ScenarioLab } from "../kit/scenario-lab.js";
import { Undo } from "../kit/undo.js";
import {
  deleteNamespace,
  loadgenDaemonSet,
  loadgenStats,
  loadgensRunning,
  namespace,
  podsOf,
  rolledOut,
} from "../kit/workloads.js";
import { ConntrackEvents, describeEvent, eventsOfLookup } from "./conntrack-events.js";
import { type Propagation, PropagationWatch } from "./propagation.js";

/**
 * C16: CoreDNS's lameduck against the proxy's propagation delay. Under steady lookups from a client on every
 * node, the DNS Deployment is rolled (`kubectl rollout restart`'s annotation) once per lameduck setting; the
 * report counts failed lookups per setting and how long each node's rules kept sending to a deleted DNS pod.
 *
 * The agent reads ConfigMap volumes when a container starts (like a kubelet before its refresh), and a pod's
 * lameduck is the one it started with, so each setting takes two rolls: one to start pods with it (not counted),
 * one measured, whose deleted pods are the ones running the setting.
 *
 * The clients resolve as glibc does, each lookup from a UDP socket of its own, so a lookup follows the rules of its
 * moment, unless the kernel gave its socket the port of an earlier lookup whose conntrack entry (30 s for UDP) still
 * stands: then it goes where that entry says. Such an entry to a pod past its lameduck lost a lookup or a few per
 * roll until the proxy removed answered entries to terminating DNS pods its rules no longer choose (the default;
 * SWITCHYARD_PROXY_CONNTRACK=upstream in the proxy's environment keeps upstream's rule, to compare). Each failure is
 * listed with its node and source port, the key to its conntrack entry (`conntrack -E -p udp --orig-port-dst 53`).
 * The proxy first deleted those entries, which now and then lost a lookup whose query was on its way through one
 * (its answer came back untranslated); it now gives them a second to live instead. With `trace`, `conntrack -E` runs
 * on every node during each measured roll and each failure is listed with its entry's events; a timed-out lookup
 * also says whether its answer came late (the loadgen listens 3 s more) or never.
 */
const params = {
  lameducks: { key: "lameducks", default: "0s,5s", help: "the lameduck settings, measured in this order" },
  interval: { key: "interval", default: "50", help: "ms between a client's rounds of lookups" },
  settle: { key: "settle", default: "3", help: "seconds of counting after each roll" },
  rolls: { key: "rolls", default: "1", help: "measured rolls per setting, each counted on its own" },
  trace: {
    key: "trace",
    default: "",
    help: "a folder: record `conntrack -E` (UDP port 53) on every node during each measured roll, keep it there, and show each failed lookup's entry",
  },
} satisfies Record<string, ScenarioParam>;

const ns = "switchyard-scenario-lameduck";
const dnsNames = ["kubernetes.default.svc.cluster.local.", "kube-dns.kube-system.svc.cluster.local."];
const corefilePath = "/api/v1/namespaces/kube-system/configmaps/coredns";

interface Lookups {
  byNode: Record<string, { attempts: number; failures: number }>;
  errors: Record<string, number>;
  /** Seconds from the latest deletion before each failure to the failure. */
  offsets: number[];
  /**
   * Failures sent after a deleted pod's lameduck ran out from a node whose rules still sent to that pod: the
   * lookups lameduck is there to save (each lookup has a socket of its own, so it mostly goes where the rules say).
   */
  exited: number;
  /** Each failure: the client's node, the lookup's source port (to find its conntrack entry), error, offset. */
  failed: FailedLookup[];
}

interface FailedLookup {
  node: string;
  port?: number;
  error: string;
  offset?: number;
  /** A timeout's timer fired this many ms after sending; the answer came this many ms after sending after all. */
  timerMs?: number;
  replyMs?: number;
  /** With `trace`: the conntrack events of the entry it met, seconds from its sending. */
  events?: string[];
}

interface Run {
  lameduck: string;
  lookups: Lookups;
  propagation: Propagation[];
  resolutionMs: number;
  /** Per node: mean kubeproxy_network_programming_duration_seconds over the roll, ms. */
  programmingMs: Record<string, number | undefined>;
  rollSeconds: number;
  /** With `trace`: the DNS pods (old and new) by address, to read the events' reply sources. */
  pods?: string[];
  /** With `trace`: per node, what conntrack -E complained of (events lost, or it did not run). */
  traceProblems?: string[];
}

export const lameduck: Scenario = {
  name: "lameduck",
  summary:
    "rolls the DNS Deployment under lookups with lameduck 0s and 5s; failed lookups, proxy propagation",
  claims: ["C16"],
  params: Object.values(params),
  async run(ctx: ScenarioContext) {
    const lab = await openLab(ctx, "lameduck");
    const undo = new Undo();
    const settings = listParam(ctx, params.lameducks);
    for (const s of settings) withLameduck("lameduck 5s", s); // validate before changing anything
    const intervalMs = numberParam(ctx, params.interval);
    const settleMs = numberParam(ctx, params.settle) * 1000;
    const rolls = Math.max(1, Math.floor(numberParam(ctx, params.rolls)));
    const traceDir = ctx.params.get(params.trace.key) ?? params.trace.default;
    if (traceDir) mkdirSync(traceDir, { recursive: true });
    const runs: Run[] = [];
    let restoreFailures: string[] = [];
    try {
      lab.progress.update("starting a DNS client on every node", true);
      undo.push(`namespace ${ns}`, () => deleteNamespace(lab.client, ns, lab.deadline()));
      await applyObjects(lab.client, [namespace(ns), loadgenDaemonSet(ns, [], dnsNames, intervalMs)]);
      await waitUntil(
        "the DNS clients",
        () => loadgensRunning(lab.client, ns, lab.nodes.length, lab.loadStats),
        lab.deadline(),
        lab.progress,
      );

      const cm = await lab.client.call<ConfigMap>("GET", corefilePath);
      const original = cm.data?.Corefile ?? "";
      let running = original;
      undo.push(`the coredns ConfigMap (lameduck ${lameduckOf(original)}) and pods running it`, async () => {
        await setCorefile(lab, original);
        if (running !== original) await roll(lab);
      });
      for (const setting of settings) {
        lab.progress.update(`lameduck ${setting}: starting DNS pods with it (one roll, not counted)`, true);
        await setCorefile(lab, withLameduck(original, setting));
        running = withLameduck(original, setting);
        await roll(lab);
        // The pods this roll replaced run the previous setting: the measured roll starts once they are gone and
        // the lookups they failed have timed out, so none of theirs is counted against this setting.
        await oldPodsGone(lab);
        await sleep(realClock, settleMs);
        // Each measured roll ends once its deleted pods are gone and counting settled: the next one starts clean.
        for (let i = 1; i <= rolls; i++) {
          lab.progress.update(`lameduck ${setting}: measured roll ${i}/${rolls}`, true);
          runs.push(
            await measuredRoll(lab, setting, settleMs, traceDir ? { dir: traceDir, roll: i } : undefined),
          );
        }
      }
    } finally {
      restoreFailures = await undo.run(lab.progress);
      lab.close();
    }
    lab.progress.done("lameduck done");
    return { scenario: "lameduck", lines: lines(runs, restoreFailures), findings: [finding(runs)] };
  },
};

async function setCorefile(lab: ScenarioLab, corefile: string) {
  await lab.client.call("PATCH", corefilePath, { data: { Corefile: corefile } }, patchContentTypes.merge);
}

/** `kubectl rollout restart`: a new pod-template annotation, then wait until no old pod is left. */
async function roll(lab: ScenarioLab) {
  await lab.client.call(
    "PATCH",
    "/apis/apps/v1/namespaces/kube-system/deployments/coredns",
    {
      spec: {
        template: {
          metadata: { annotations: { "kubectl.kubernetes.io/restartedAt": new Date().toISOString() } },
        },
      },
    },
    patchContentTypes.merge,
  );
  await sleep(realClock, 500);
  await waitUntil(
    "the coredns roll",
    () => rolledOut(lab.client, "kube-system", "coredns"),
    lab.deadline(),
    lab.progress,
  );
}

async function oldPodsGone(lab: ScenarioLab) {
  await waitUntil(
    "the old DNS pods to go",
    async () => {
      const pods = await podsOf(lab.client, "kube-system", "k8s-app=kube-dns");
      const going = pods.filter((p) => p.metadata?.deletionTimestamp).length;
      return going === 0 ? true : `${going} terminating`;
    },
    lab.deadline(),
    lab.progress,
  );
}

async function measuredRoll(
  lab: ScenarioLab,
  setting: string,
  settleMs: number,
  trace?: { dir: string; roll: number },
): Promise<Run> {
  const tracers = trace ? lab.nodes.map((n) => new ConntrackEvents(n.run)) : [];
  // conntrack -E subscribes within a moment; the roll only starts after the readings below anyway.
  if (trace) await sleep(realClock, 1000);
  const podsBefore = trace ? await podsOf(lab.client, "kube-system", "k8s-app=kube-dns") : [];
  const watch = new PropagationWatch(lab.client, lab.exec, lab.nodes, "kube-system", "k8s-app=kube-dns");
  await watch.start();
  const metricsBefore = await Promise.all(lab.nodes.map((n) => proxyMetrics(lab.exec, n.run)));
  const before = await loadgenStats(lab.client, ns, "loadgen", lab.loadStats);
  const t0 = Date.now();
  await roll(lab);
  const rollSeconds = (Date.now() - t0) / 1000;
  // The last deleted pod drains for its lameduck after the roll looks done; count until it is gone, and then some.
  await oldPodsGone(lab);
  await sleep(realClock, settleMs);
  const after = await loadgenStats(lab.client, ns, "loadgen", lab.loadStats);
  const { results, resolutionMs } = await watch.stop(lab.deadline(30_000));
  const metricsAfter = await Promise.all(lab.nodes.map((n) => proxyMetrics(lab.exec, n.run)));
  const traced = await Promise.all(tracers.map((t) => t.stop()));
  const eventsOf = new Map(lab.nodes.map((n, i) => [n.name, traced[i]?.events ?? []]));
  if (trace)
    for (const [i, n] of lab.nodes.entries()) {
      const file = join(trace.dir, `lameduck-${setting}-roll${trace.roll}-${n.name}.conntrack`);
      writeFileSync(file, `${(traced[i]?.raw ?? []).join("\n")}\n`);
    }
  const podsAfter = trace ? await podsOf(lab.client, "kube-system", "k8s-app=kube-dns") : [];
  const deletions = results.map((p) => p.deletedAt).sort((a, b) => a - b);
  const lookups: Lookups = { byNode: {}, errors: {}, offsets: [], exited: 0, failed: [] };
  const lameduckMs = parseMs(setting);
  // Where the rules stopped sending to a pod is known to one poll round: count the round in, so a lookup the
  // rules might still have sent to the exited pod is counted as one.
  const toExitedPod = (node: string, at: number) =>
    results.some((p) => {
      const dropped = p.byNode[node];
      return (
        at >= p.deletedAt + lameduckMs && (dropped === undefined || at < p.deletedAt + dropped + resolutionMs)
      );
    });
  for (const [node, a] of Object.entries(after)) {
    const b = before[node];
    if (!b || b.startedAt !== a.startedAt) continue;
    const d = loadDelta(b, a);
    lookups.byNode[node] = d.dns;
    for (const f of d.recent) {
      lookups.errors[f.error] = (lookups.errors[f.error] ?? 0) + 1;
      const at = Date.parse(f.at);
      const last = deletions.filter((t) => t <= at).at(-1);
      const offset = last === undefined ? undefined : (at - last) / 1000;
      if (offset !== undefined) lookups.offsets.push(offset);
      if (toExitedPod(node, at)) lookups.exited++;
      const events =
        trace && f.port
          ? eventsOfLookup(eventsOf.get(node) ?? [], f.port, at).map((e) => describeEvent(e, at))
          : undefined;
      lookups.failed.push({
        node,
        error: f.error,
        ...(f.port ? { port: f.port } : {}),
        ...(offset === undefined ? {} : { offset }),
        ...(f.timerMs ? { timerMs: f.timerMs } : {}),
        ...(f.replyMs ? { replyMs: f.replyMs } : {}),
        ...(events ? { events } : {}),
      });
    }
  }
  const programmingMs: Run["programmingMs"] = {};
  lab.nodes.forEach((n, i) => {
    const b = histogram(metricsBefore[i] ?? "", programmingHistogram);
    const a = histogram(metricsAfter[i] ?? "", programmingHistogram);
    programmingMs[n.name] = a.count > b.count ? ((a.sum - b.sum) / (a.count - b.count)) * 1000 : undefined;
  });
  const pods = trace ? podAddresses([...podsBefore, ...podsAfter]) : undefined;
  const traceProblems = lab.nodes.flatMap((n, i) => {
    const p = traced[i]?.problem;
    return p ? [`${n.name}: ${p}`] : [];
  });
  // Beside the events: the deletions (ms since the epoch, as conntrack's stamps are seconds) and the failures.
  if (trace)
    writeFileSync(
      join(trace.dir, `lameduck-${setting}-roll${trace.roll}.json`),
      `${JSON.stringify({ setting, deletions: results, pods, failed: lookups.failed }, null, 1)}\n`,
    );
  return {
    lameduck: setting,
    lookups,
    propagation: results,
    resolutionMs,
    programmingMs,
    rollSeconds,
    ...(pods ? { pods } : {}),
    ...(traceProblems.length > 0 ? { traceProblems } : {}),
  };
}

const total = (r: Run) =>
  Object.values(r.lookups.byNode).reduce(
    (s, x) => ({ attempts: s.attempts + x.attempts, failures: s.failures + x.failures }),
    { attempts: 0, failures: 0 },
  );
const ratio = (x: { attempts: number; failures: number }) => `${x.failures}/${x.attempts}`;
const propagationValues = (r: Run) => r.propagation.flatMap((p) => Object.values(p.byNode));
const maxPropagation = (r: Run) => Math.max(0, ...propagationValues(r));
/** Failed lookups listed one by one (node, source port, error) before the rest are counted. */
const shownFailures = 8;
const ms = (v: number | undefined) => (v === undefined ? "-" : `${Math.round(v)}ms`);

function lines(runs: Run[], restoreFailures: string[]): string[] {
  const out = [
    "DNS Deployment rolled under lookups from every node (failed/attempted lookups); propagation: from a DNS pod's",
    "deletion (seen on a watch) to each node's rules no longer sending to it",
    "",
    "LAMEDUCK  LOOKUPS FAILED  PROPAGATION MAX  ROLL",
  ];
  for (const r of runs)
    out.push(
      `${r.lameduck.padEnd(10)}${ratio(total(r)).padEnd(16)}${ms(maxPropagation(r)).padEnd(17)}${r.rollSeconds.toFixed(1)}s`,
    );
  for (const r of runs) {
    out.push(
      "",
      `lameduck ${r.lameduck}: per deleted DNS pod, ms until each node's rules dropped it (poll round ≈${Math.round(r.resolutionMs)}ms)`,
    );
    for (const p of r.propagation)
      out.push(
        `  ${p.pod} (${p.ip}): ${
          Object.entries(p.byNode)
            .map(([n, v]) => `${n} ${v}`)
            .join(", ") || "never seen dropped"
        }`,
      );
    const prog = Object.entries(r.programmingMs)
      .map(([n, v]) => `${n} ${ms(v)}`)
      .join(", ");
    out.push(`  kubeproxy_network_programming_duration_seconds, mean over the roll: ${prog}`);
    for (const p of r.traceProblems ?? []) out.push(`  conntrack -E on ${p}`);
    out.push(
      `  lookups by client node: ${Object.entries(r.lookups.byNode)
        .map(([n, x]) => `${n} ${ratio(x)}`)
        .join(", ")}`,
    );
    if (Object.keys(r.lookups.errors).length > 0)
      out.push(
        `  failed: ${Object.entries(r.lookups.errors)
          .map(([e, n]) => `${e} ${n}`)
          .join(
            ", ",
          )}; sent, seconds after the latest deletion: ${r.lookups.offsets.map((x) => x.toFixed(1)).join(" ")}`,
        `  sent to a pod past its lameduck, by that node's rules of the moment: ${r.lookups.exited}; others: ${total(r).failures - r.lookups.exited}`,
        ...r.lookups.failed.slice(0, shownFailures).flatMap(failureLines),
        ...(r.lookups.failed.length > shownFailures
          ? [`    and ${r.lookups.failed.length - shownFailures} more`]
          : []),
      );
  }
  if (runs.some((r) => r.pods)) {
    out.push("", "DNS pods seen in the traced rolls (address: pod, node):");
    out.push(...[...new Set(runs.flatMap((r) => r.pods ?? []))].map((p) => `  ${p}`));
  }
  if (restoreFailures.length > 0) out.push("", "NOT RESTORED:", ...restoreFailures.map((f) => `  ${f}`));
  return out;
}

/** A failed lookup's line, and with `trace` its conntrack entry's events. */
function failureLines(f: FailedLookup): string[] {
  const sent = f.offset === undefined ? "" : `, sent ${f.offset.toFixed(2)} s after a deletion`;
  const timer = f.timerMs ? `, timer fired at ${f.timerMs} ms` : "";
  const late = f.replyMs
    ? `, answer came at ${f.replyMs} ms`
    : f.error === "ETIMEOUT"
      ? ", no answer within 3 s more"
      : "";
  const head = `    ${f.node} source port ${f.port ?? "?"}: ${f.error}${sent}${timer}${late}`;
  if (!f.events) return [head];
  if (f.events.length === 0) return [head, "      conntrack: no event for this port"];
  return [head, ...f.events.map((e) => `      ${e}`)];
}

function podAddresses(pods: readonly Pod[]): string[] {
  const seen = new Map<string, string>();
  for (const p of pods) {
    const ip = p.status?.podIP;
    if (ip) seen.set(ip, `${ip}: ${p.metadata?.name ?? "?"}, ${p.spec?.nodeName ?? "?"}`);
  }
  return [...seen.values()];
}

/** The rolls of one setting as one: lookups summed per node, failures and deleted pods together. */
function merged(runs: readonly Run[]): Run | undefined {
  const [first] = runs;
  if (!first) return undefined;
  const byNode: Lookups["byNode"] = {};
  for (const r of runs)
    for (const [n, x] of Object.entries(r.lookups.byNode)) {
      const sum = byNode[n] ?? { attempts: 0, failures: 0 };
      byNode[n] = { attempts: sum.attempts + x.attempts, failures: sum.failures + x.failures };
    }
  return {
    ...first,
    propagation: runs.flatMap((r) => r.propagation),
    lookups: {
      byNode,
      errors: {},
      offsets: runs.flatMap((r) => r.lookups.offsets),
      exited: runs.reduce((n, r) => n + r.lookups.exited, 0),
      failed: runs.flatMap((r) => r.lookups.failed),
    },
  };
}

function finding(runs: Run[]): ClaimFinding {
  const settings = [...new Set(runs.map((r) => r.lameduck))];
  const perSetting = settings.map((s) => ({
    rolls: runs.filter((r) => r.lameduck === s),
    all: merged(runs.filter((r) => r.lameduck === s)),
  }));
  const zero = perSetting.find((x) => parseMs(x.all?.lameduck ?? "") === 0)?.all;
  const longest = perSetting
    .map((x) => x.all)
    .reduce<Run | undefined>(
      (a, r) => (!a || (r && parseMs(r.lameduck) > parseMs(a.lameduck)) ? r : a),
      undefined,
    );
  const prop = Math.max(0, ...runs.map(maxPropagation));
  const measured = perSetting
    .map(({ rolls, all }) => {
      const each =
        rolls.length > 1
          ? ` in ${rolls.length} rolls (${rolls.map((r) => total(r).failures).join(", ")} per roll)`
          : "";
      return all
        ? `lameduck ${all.lameduck}: ${ratio(total(all))} lookups failed${each}, propagation up to ${ms(maxPropagation(all))}`
        : "";
    })
    .join("; ");
  if (!zero || !longest || zero === longest)
    return { claim: "C16", measured, verdict: "not measured", note: "needs lameducks=0s and a longer one" };
  // Failures of the long setting sent to a pod past its lameduck would be the claim's mechanism; others are not.
  const late = longest.lookups.exited;
  const early = longest.lookups.offsets.length - late;
  const advice = `propagation here is up to ${ms(prop)}, so ${longest.lameduck} covers it; 30 s is a margin to size against your nodes' p99 of kubeproxy_network_programming_duration_seconds, not a constant (this lab needs no 30 s)`;
  const earlyNote = early
    ? `; ${early} lookup(s) failed with ${longest.lameduck} that the rules did not send to an exited pod (sent ${longest.lookups.offsets.map((x) => x.toFixed(1)).join(", ")} s after a deletion; their source ports are listed above: look for a conntrack entry of that port made before the roll)`
    : "";
  const shortFails = total(zero).failures > 0 && total(zero).failures > total(longest).failures;
  if (shortFails && late === 0)
    return { claim: "C16", measured, verdict: "holds", note: `${advice}${earlyNote}` };
  return {
    claim: "C16",
    measured,
    verdict: "half right",
    note: `${shortFails ? "" : "lameduck 0s lost no more than the longer one; "}${advice}${earlyNote}`,
  };
}

function parseMs(d: string): number {
  const m = /^(\d+)(ms|s|m)$/.exec(d);
  if (!m) return 0;
  return Number(m[1]) * (m[2] === "ms" ? 1 : m[2] === "s" ? 1000 : 60_000);
}
