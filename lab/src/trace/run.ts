// `trace`'s shell: the watches, the rule reads and the changes it makes, fed into ChangeFollower, whose
// changes are printed as they complete.

import { familyOf } from "@switchyard/basics";
import { realClock, sleep } from "@switchyard/kube";
import type { Node, Service, ServicePort } from "kubernetes-types/core/v1.js";
import { readableNode } from "../explain/open-lab.js";
import { pickServicePort } from "../explain/targets.js";
import { proxyMetrics } from "../scenarios/kit/node-proxy.js";
import { histogram, programmingHistogram } from "../scenarios/kit/prom.js";
import { type LabNode, type ScenarioLab, serviceSlices } from "../scenarios/kit/scenario-lab.js";
import { SliceWatch } from "../scenarios/kit/slice-watch.js";
import { isComplete, type TracedChange } from "./change.js";
import { ChangeFollower } from "./follow.js";
import { PodWatch } from "./pod-watch.js";
import { RulePoll } from "./rule-poll.js";
import { formatChange, formatSummary } from "./timeline.js";
import { replicasOf, scaleTo, selectorOf, type Workload, workloadOf } from "./workload.js";

export interface TraceOptions {
  namespace: string;
  service: string;
  /** The Service port (name or number); the only one when absent. */
  port?: string;
  /** How many changes to follow. */
  changes: number;
  /** Follow changes someone else makes instead of making them. */
  watch: boolean;
  /** How long one change may take to reach every node (ms). */
  waitMs: number;
  /** How long --watch waits for its changes (ms). */
  timeoutMs: number;
}

/** A slice write is taken this long after it arrived, so that the pod watch has delivered its cause too. */
const SETTLE_MS = 500;

interface Session {
  service: Service;
  port: ServicePort;
  slices: SliceWatch;
  pods: PodWatch | undefined;
  poll: RulePoll;
  follower: ChangeFollower;
  /** Position in the slice watch's events up to which they have been given to the follower. */
  cursor: number;
  cause: string;
}

async function open(lab: ScenarioLab, o: TraceOptions): Promise<Session> {
  const service = await lab.client.call<Service>(
    "GET",
    `/api/v1/namespaces/${o.namespace}/services/${o.service}`,
  );
  const port = pickServicePort(service, o.port);
  const ip = service.spec?.clusterIP ?? "";
  if (!ip || ip === "None") throw new Error(`Service ${o.namespace}/${o.service} has no ClusterIP to trace`);
  const slices = await SliceWatch.start(lab.client, o.namespace);
  const initial = await serviceSlices(lab, o.namespace, o.service);
  const selector = service.spec?.selector ? selectorOf(service) : undefined;
  const pods = selector ? await PodWatch.start(lab.client, o.namespace, selector) : undefined;
  const protocol = port.protocol === "UDP" ? "udp" : "tcp";
  const polled = await Promise.all(
    lab.nodes.map(async (node) => ({ node, readable: await readableNode(lab, node) })),
  );
  const poll = await RulePoll.start(lab.exec, polled, { ip, port: port.port, protocol });
  const apiNodes = (await lab.client.call<{ items: Node[] }>("GET", "/api/v1/nodes")).items;
  const followed = poll.pollers.map((p) => ({
    name: p.node.name,
    labels: apiNodes.find((n) => n.metadata?.name === p.node.name)?.metadata?.labels ?? {},
    mode: p.mode,
  }));
  const follower = new ChangeFollower(service, port, followed, familyOf(ip), initial);
  return { service, port, slices, pods, poll, follower, cursor: slices.mark(), cause: "" };
}

/** Gives the follower the slice writes that have settled, and the nodes' reads. */
function pump(s: Session, name: string): void {
  const events = s.slices.events;
  s.slices.count(s.cursor, name); // throws if the watch broke
  while (s.cursor < events.length) {
    const e = events[s.cursor];
    if (!e || Date.now() - e.at < SETTLE_MS) break;
    s.cursor++;
    if (e.service !== name) continue;
    const moment = (ip: string, kind: "added" | "removed") => s.pods?.momentFor(ip, kind, e.at + SETTLE_MS);
    s.follower.write({ at: e.at, type: e.type, slice: e.slice }, s.cause, moment);
  }
  s.follower.settle((node) => s.poll.readsOf(node));
}

/** The programming-latency histogram of every node's proxy. */
async function programming(lab: ScenarioLab, nodes: readonly LabNode[]) {
  return Promise.all(
    nodes.map(async (n) => histogram(await proxyMetrics(lab.exec, n.run), programmingHistogram)),
  );
}

/**
 * The proxy's own figure for a change: the mean of the network programming durations it observed while the change
 * was followed. A proxy observes one only for a slice write that carries a trigger time, so a change without one
 * gets none (whatever else the proxy observed meanwhile belongs to other writes).
 */
function attachProxyFigures(
  changes: readonly TracedChange[],
  nodes: readonly LabNode[],
  before: { count: number; sum: number }[],
  after: { count: number; sum: number }[],
): void {
  nodes.forEach((n, i) => {
    const d = {
      count: (after[i]?.count ?? 0) - (before[i]?.count ?? 0),
      sum: (after[i]?.sum ?? 0) - (before[i]?.sum ?? 0),
    };
    if (d.count <= 0) return;
    for (const c of changes.filter((x) => x.slice?.triggerTime))
      for (const p of c.nodes)
        if (p.node === n.name && p.affected) {
          p.proxySeconds = d.sum / d.count;
          p.proxyObservations = d.count;
        }
  });
}

/** Waits until `done` holds for the changes made since `from`, or the deadline; returns them. */
async function until(
  s: Session,
  o: TraceOptions,
  from: number,
  done: (made: TracedChange[]) => boolean,
  deadline: number,
): Promise<TracedChange[]> {
  for (;;) {
    pump(s, o.service);
    const made = s.follower.changes.slice(from);
    if (done(made) || Date.now() > deadline) return made;
    await sleep(realClock, 100);
  }
}

/** Scales the workload one up, then back, `o.changes` times in all, following each change to every node. */
async function makeChanges(
  lab: ScenarioLab,
  s: Session,
  o: TraceOptions,
  print: (t: string) => void,
): Promise<void> {
  const w: Workload = await workloadOf(lab.client, s.service);
  const original = await replicasOf(lab.client, w);
  let replicas = original;
  try {
    for (let i = 0; i < o.changes; i++) {
      const kind = i % 2 === 0 ? "added" : "removed";
      const next = kind === "added" ? original + 1 : original;
      const before = await programming(lab, lab.nodes);
      const from = s.follower.changes.length;
      s.cause = `scaled ${w.kind} ${w.namespace}/${w.name} ${replicas} → ${next}`;
      lab.progress.update(`change ${i + 1} of ${o.changes}: ${s.cause}`, true);
      await scaleTo(lab.client, w, next);
      replicas = next;
      const ofKind = (made: TracedChange[]) => made.filter((c) => c.kind === kind);
      const made = await until(
        s,
        o,
        from,
        (m) => ofKind(m).length > 0 && m.every(isComplete),
        Date.now() + o.waitMs,
      );
      if (ofKind(made).length === 0)
        throw new Error(
          `${s.cause}: no endpoint of ${o.namespace}/${o.service} was ${kind} within ${o.waitMs / 1000} s`,
        );
      attachProxyFigures(made, lab.nodes, before, await programming(lab, lab.nodes));
      for (const c of made) print(formatChange(c, s.follower.changes.indexOf(c) + 1, o.changes, o.waitMs));
    }
  } finally {
    if (replicas !== original) await scaleTo(lab.client, w, original);
  }
}

/** Follows the next `o.changes` changes someone else makes, printing each once it reached every node. */
async function watchChanges(
  lab: ScenarioLab,
  s: Session,
  o: TraceOptions,
  print: (t: string) => void,
): Promise<void> {
  s.cause = "seen on the watch";
  const end = Date.now() + o.timeoutMs;
  let printed = 0;
  let before = await programming(lab, lab.nodes);
  lab.progress.update(
    `watching ${o.namespace}/${o.service} for ${o.changes} changes (scale or roll its pods)`,
    true,
  );
  while (printed < o.changes && Date.now() < end) {
    const changes = await until(s, o, 0, (m) => m.length > printed, end);
    const next = changes[printed];
    if (!next) break;
    // Each change gets until its own wait runs out to reach the nodes, then it is printed as it stands.
    await until(s, o, printed, () => isComplete(next), Math.min(end, next.podAt + o.waitMs));
    const after = await programming(lab, lab.nodes);
    attachProxyFigures([next], lab.nodes, before, after);
    before = after;
    print(formatChange(next, ++printed, o.changes, o.waitMs));
  }
}

/** Runs a trace; prints each change as it completes and returns the summary. */
export async function runTrace(
  lab: ScenarioLab,
  o: TraceOptions,
  print: (text: string) => void,
): Promise<string> {
  const s = await open(lab, o);
  try {
    if (o.watch) await watchChanges(lab, s, o, print);
    else await makeChanges(lab, s, o, print);
    const changes = s.follower.changes.slice(-o.changes);
    const notes = s.poll.notes();
    const summary = formatSummary(
      changes,
      lab.nodes.map((n) => n.name),
      s.poll.resolutionMs,
    );
    return notes.length
      ? `${summary}\nnot read or not followed in the rules:\n${notes.map((n) => `  ${n}`).join("\n")}`
      : summary;
  } finally {
    await s.poll.stop();
    s.slices.stop();
    s.pods?.stop();
  }
}
