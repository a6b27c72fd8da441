// trace's core: slice writes and rule reads turned into changes and timelines, on the fixture cluster
// (../explain/fixture-cluster.ts): node-1 and node-3 in zone-a, node-2 in zone-b.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Endpoint, EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { TracedChange } from "../../src/trace/change.js";
import { isComplete } from "../../src/trace/change.js";
import { ChangeFollower, programmedAt } from "../../src/trace/follow.js";
import type { PodMoment } from "../../src/trace/pod-watch.js";
import type { RuleRead } from "../../src/trace/rule-poll.js";
import { reachedAddresses } from "../../src/trace/rule-poll.js";
import { formatChange, formatSummary } from "../../src/trace/timeline.js";
import { hinted, web } from "../explain/fixture-cluster.js";

const nodes = [1, 2, 3].map((n) => ({
  name: `node-${n}`,
  labels: { "topology.kubernetes.io/zone": n === 2 ? "zone-b" : "zone-a" },
  mode: "nftables" as const,
}));

function follower(c: typeof web) {
  const port = c.service.spec?.ports?.[0];
  if (!port) throw new Error("no port");
  return new ChangeFollower(c.service, port, nodes, "IPv4", structuredClone(c.slices));
}

/** The fixture's slice with `edit` applied to its endpoints, at a later resourceVersion. */
function written(
  c: typeof web,
  rv: number,
  edit: (eps: Endpoint[]) => Endpoint[],
  trigger?: string,
): EndpointSlice {
  const s = structuredClone(c.slices[0] as EndpointSlice);
  s.metadata = {
    ...s.metadata,
    resourceVersion: String(rv),
    ...(trigger ? { annotations: { "endpoints.kubernetes.io/last-change-trigger-time": trigger } } : {}),
  };
  s.endpoints = edit(s.endpoints ?? []);
  return s;
}

const newEndpoint = (ip: string, node: number, hint?: string): Endpoint => ({
  addresses: [ip],
  conditions: { ready: true },
  nodeName: `node-${node}`,
  zone: node === 2 ? "zone-b" : "zone-a",
  ...(hint ? { hints: { forZones: [{ name: hint }] } } : {}),
});

const ready = (ip: string, at: number): PodMoment => ({
  pod: "default/web-new",
  ip,
  kind: "ready",
  at,
  readySince: "2026-12-02T15:00:01Z",
});
const reads = (...rs: [number, string[]][]): RuleRead[] =>
  rs.map(([at, ips]) => ({ at, reaches: new Set(ips) }));
const old = ["10.244.1.6", "10.244.2.6", "10.244.3.6"];

describe("following changes", () => {
  test("a new ready endpoint: the pod moment, the slice write, and each node's first read that shows it", () => {
    const f = follower(web);
    const made = f.write(
      {
        at: 1100,
        type: "MODIFIED",
        slice: written(web, 10, (eps) => [...eps, newEndpoint("10.244.2.16", 2)]),
      },
      "scaled Deployment default/web 3 → 4",
      (ip) => ready(ip, 1000),
    );
    assert.deepEqual(
      made.map((c) => [c.kind, c.ip, c.podAt, c.pod, c.slice?.resourceVersion]),
      [["added", "10.244.2.16", 1000, "default/web-new", "10"]],
    );
    const byNode: Record<string, RuleRead[]> = {
      "node-1": reads([990, old], [1050, old], [1200, [...old, "10.244.2.16"]]),
      "node-2": reads([1150, [...old, "10.244.2.16"]]),
      "node-3": reads([1300, old]),
    };
    f.settle((n) => byNode[n] ?? []);
    const change = made[0] as TracedChange;
    assert.deepEqual(
      change.nodes.map((n) => [n.node, n.affected, n.at]),
      [
        ["node-1", true, 1200],
        ["node-2", true, 1150],
        ["node-3", true, undefined],
      ],
    );
    assert.equal(isComplete(change), false);
    byNode["node-3"]?.push({ at: 1400, reaches: new Set([...old, "10.244.2.16"]) });
    f.settle((n) => byNode[n] ?? []);
    assert.equal(isComplete(change), true);
  });

  test("a write no newer than what is held changes nothing", () => {
    const f = follower(web);
    const slice = written(web, 10, (eps) => [...eps, newEndpoint("10.244.2.16", 2)]);
    assert.equal(f.write({ at: 1, type: "MODIFIED", slice }, "", () => undefined).length, 1);
    assert.equal(f.write({ at: 2, type: "MODIFIED", slice }, "", () => undefined).length, 0);
  });

  test("an endpoint going not ready is removed; without a pod moment the trigger time stands in", () => {
    const f = follower(web);
    const made = f.write(
      {
        at: Date.parse("2026-12-02T15:00:02.300Z"),
        type: "MODIFIED",
        slice: written(
          web,
          11,
          (eps) =>
            eps.map((e) =>
              e.addresses[0] === "10.244.3.6" ? { ...e, conditions: { ready: false, terminating: true } } : e,
            ),
          "2026-12-02T15:00:02Z",
        ),
      },
      "seen on the watch",
      () => undefined,
    );
    assert.deepEqual(
      made.map((c) => [c.kind, c.ip, c.podSeen, c.podAt]),
      [["removed", "10.244.3.6", false, Date.parse("2026-12-02T15:00:02Z")]],
    );
    const change = made[0] as TracedChange;
    assert.equal(
      programmedAt(
        reads([change.podAt - 1, ["10.244.1.6"]], [change.podAt + 5, old]),
        "10.244.3.6",
        "removed",
        change.podAt,
      ),
      undefined,
    );
    assert.equal(
      programmedAt(
        reads([change.podAt + 5, old], [change.podAt + 90, ["10.244.1.6"]]),
        "10.244.3.6",
        "removed",
        change.podAt,
      ),
      change.podAt + 90,
    );
  });

  test("hints: a zone-b endpoint concerns only the zone-b node", () => {
    const f = follower(hinted);
    const [change] = f.write(
      {
        at: 5,
        type: "MODIFIED",
        slice: written(hinted, 12, (eps) => [...eps, newEndpoint("10.244.2.50", 2, "zone-b")]),
      },
      "",
      () => undefined,
    );
    assert.deepEqual(
      change?.nodes.map((n) => [n.node, n.affected]),
      [
        ["node-1", false],
        ["node-2", true],
        ["node-3", false],
      ],
    );
  });

  test("the addresses a trace reached, without verdicts", () => {
    assert.deepEqual(
      [...reachedAddresses(["10.244.1.6:8080", "[fd00::6]:80", "REJECT"])],
      ["10.244.1.6", "fd00::6"],
    );
  });
});

describe("timeline and summary", () => {
  const change = (
    podAt: number,
    slice: number,
    n1: number | undefined,
    n2: number | undefined,
  ): TracedChange => ({
    kind: "added",
    cause: "scaled Deployment default/web 3 → 4",
    pod: "default/web-new",
    ip: "10.244.2.16",
    podAt,
    podSeen: true,
    readySince: "2026-12-02T15:00:01Z",
    slice: {
      name: "web-abcde",
      resourceVersion: "10",
      triggerTime: "2026-12-02T15:00:01Z",
      at: podAt + slice,
    },
    nodes: [
      { node: "node-1", affected: true, ...(n1 === undefined ? {} : { at: podAt + n1 }), proxySeconds: 1.25 },
      { node: "node-2", affected: n2 !== undefined, ...(n2 === undefined ? {} : { at: podAt + n2 }) },
    ],
  });

  test("one change: each step's offset from the pod change, nodes in the order they programmed it", () => {
    const text = formatChange(change(Date.parse("2026-12-02T15:00:01.400Z"), 60, 310, 250), 1, 4, 60_000);
    assert.equal(
      text,
      [
        "change 1 of 4: 10.244.2.16 added (pod default/web-new), scaled Deployment default/web 3 → 4",
        "  +0.000 s  pod default/web-new Ready, seen 2026-12-02T15:00:01.400Z (its Ready condition says 2026-12-02T15:00:01Z)",
        "  +0.060 s  EndpointSlice web-abcde written: resourceVersion 10, last-change-trigger-time 2026-12-02T15:00:01Z",
        "  +0.250 s  node-2: rules send the ClusterIP to it",
        "  +0.310 s  node-1: rules send the ClusterIP to it   (its proxy's network programming: 1.250 s)",
      ].join("\n"),
    );
    assert.match(
      formatChange(change(0, 60, undefined, undefined), 2, 4, 60_000),
      /node-1: rules not seen to change within 60\.000 s\n.*node-2: not affected/,
    );
  });

  test("a removal names what the pod did; a mean of several syncs says so", () => {
    const c = change(0, 60, 120, 130);
    const removed: TracedChange = {
      ...c,
      kind: "removed",
      podEvent: "deleting",
      nodes: [{ node: "node-1", affected: true, at: 120, proxySeconds: 0.4, proxyObservations: 2 }],
    };
    const text = formatChange(removed, 2, 2, 60_000);
    assert.match(text, /^ {2}\+0\.000 s {2}pod default\/web-new deleted, seen /m);
    assert.match(
      text,
      /node-1: rules no longer send the ClusterIP to it {3}\(its proxy's network programming: 0\.400 s, the mean of 2 syncs\)$/m,
    );
  });

  test("the summary's p50 and p99 per node, and what the slice write took", () => {
    const changes = [change(0, 40, 100, 90), change(0, 60, 300, undefined), change(0, 50, 200, 110)];
    const text = formatSummary(changes, ["node-1", "node-2"], 45);
    assert.match(text, /^last 3 changes, p50 \/ p99 per node:$/m);
    assert.match(text, /node-1 +3\/3 +0\.200 s \/ 0\.300 s +0\.150 s \/ 0\.240 s +1\.250 s \/ 1\.250 s/);
    assert.match(text, /node-2 +2\/2 +0\.110 s \/ 0\.110 s +0\.060 s \/ 0\.060 s +-/);
    assert.match(text, /pod change → EndpointSlice write: 0\.050 s \/ 0\.060 s/);
    assert.match(
      text,
      /read every 0\.045 s \(the slowest node's mean\); with 3 changes the p99 is their maximum/,
    );
  });
});
