// Successive syncs: the diffs, graceful termination, and the fake kernel they are applied to.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Endpoint } from "kubernetes-types/discovery/v1.js";
import { FakeIPVS, IPVSError } from "../../src/ipvs/fake.js";
import { realServerName } from "../../src/ipvs/ipvsadm.js";
import { type IPVSState, renderIPVS } from "../../src/ipvs/render.js";
import { buildMaps, makeService, makeSlice } from "../../src/testing/fixtures.js";
import { FakeKernel, ipvsOptions } from "./helpers.js";

const p80 = [{ name: "p80", port: 80 }];
const tcp80 = [{ name: "p80", port: 80, protocol: "TCP" as const }];
const eps = (...ips: string[]): Endpoint[] => ips.map((ip) => ({ addresses: [ip] }));

function cluster(endpoints: Endpoint[], protocol: "TCP" | "UDP" = "TCP") {
  return buildMaps(
    "IPv4",
    [makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: [{ name: "p80", port: 80, protocol }] })],
    [makeSlice("ns1", "svc1", "a", endpoints, [{ name: "p80", port: 80, protocol }])],
  );
}

const vs = {
  protocol: "TCP" as const,
  address: "172.30.0.41",
  port: 80,
  scheduler: "rr",
  persistence: 0,
  schedFlags: [],
};

describe("ipvs syncs", () => {
  test("one endpoint removed: exactly one delete; nothing changed: no command at all", () => {
    const kernel = new FakeKernel(["192.168.0.2"]);
    let state: IPVSState = kernel.apply(renderIPVS(ipvsOptions(), cluster(eps("10.180.0.1", "10.180.0.2"))));
    const r = renderIPVS(ipvsOptions(), cluster(eps("10.180.0.1")), state);
    assert.equal(r.ipvsadmDiff, "-d -t 172.30.0.41:80 -r 10.180.0.2:80\n");
    state = kernel.apply(r);
    assert.equal(renderIPVS(ipvsOptions(), cluster(eps("10.180.0.1")), state).ipvsadmDiff, "");
    assert.equal(
      kernel.ipvs
        .dump()
        .split("\n")
        .filter((l) => l.includes("->")).length,
      2,
    );
  });

  test("a busy endpoint drains at weight 0, then goes once idle; re-added, it is deleted and re-added", () => {
    const kernel = new FakeKernel(["192.168.0.2"]);
    let state = kernel.apply(renderIPVS(ipvsOptions(), cluster(eps("10.180.0.1", "10.180.0.2"))));
    const busy = new Set([realServerName(vs, { address: "10.180.0.2", port: 80 })]);
    let r = renderIPVS(ipvsOptions(), { ...cluster(eps("10.180.0.1")), busyRealServers: busy }, state);
    assert.equal(r.ipvsadmDiff, "-e -t 172.30.0.41:80 -r 10.180.0.2:80 -m -w 0\n");
    state = kernel.apply(r);
    assert.match(r.ipvsadmFull, /-r 10\.180\.0\.2:80 -m -w 0/);
    // Still busy: nothing to do. Idle: deleted.
    assert.equal(
      renderIPVS(ipvsOptions(), { ...cluster(eps("10.180.0.1")), busyRealServers: busy }, state).ipvsadmDiff,
      "",
    );
    const idle = renderIPVS(ipvsOptions(), cluster(eps("10.180.0.1")), state);
    assert.equal(idle.ipvsadmDiff, "-d -t 172.30.0.41:80 -r 10.180.0.2:80\n");
    // Coming back while draining.
    r = renderIPVS(ipvsOptions(), cluster(eps("10.180.0.1", "10.180.0.2")), state);
    assert.equal(
      r.ipvsadmDiff,
      "-d -t 172.30.0.41:80 -r 10.180.0.2:80\n-a -t 172.30.0.41:80 -r 10.180.0.2:80 -m -w 1\n",
    );
    kernel.apply(r);
    assert.match(kernel.ipvs.dump(), /10\.180\.0\.2:80 Masq 1/);
  });

  test("an endpoint that starts terminating drains like a removed one (UDP never drains)", () => {
    const terminating: Endpoint = {
      addresses: ["10.180.0.2"],
      conditions: { ready: false, serving: true, terminating: true },
    };
    for (const protocol of ["TCP", "UDP"] as const) {
      const kernel = new FakeKernel(["192.168.0.2"]);
      const state = kernel.apply(
        renderIPVS(ipvsOptions(), cluster(eps("10.180.0.1", "10.180.0.2"), protocol)),
      );
      const busy = new Set([realServerName({ ...vs, protocol }, { address: "10.180.0.2", port: 80 })]);
      const next = { ...cluster([...eps("10.180.0.1"), terminating], protocol), busyRealServers: busy };
      const flag = protocol === "TCP" ? "-t" : "-u";
      const expected =
        protocol === "TCP"
          ? `-e ${flag} 172.30.0.41:80 -r 10.180.0.2:80 -m -w 0\n`
          : `-d ${flag} 172.30.0.41:80 -r 10.180.0.2:80\n`;
      assert.equal(renderIPVS(ipvsOptions(), next, state).ipvsadmDiff, expected);
    }
  });

  test("a Service removed: its virtual server, set members and VIP go; excluded CIDRs are left alone", () => {
    const kernel = new FakeKernel(["192.168.0.2"]);
    kernel.ipvs.restore("-A -t 172.31.9.9:80 -s rr\n-A -t 172.30.9.9:80 -s rr\n");
    const opts = ipvsOptions("IPv4", { excludeCIDRs: ["172.31.0.0/16"] });
    let state = kernel.apply(renderIPVS(opts, cluster(eps("10.180.0.1")), { ...emptyWith(kernel) }));
    assert.doesNotMatch(kernel.ipvs.dump(), /172\.30\.9\.9/);
    assert.match(kernel.ipvs.dump(), /172\.31\.9\.9/);
    const r = renderIPVS(opts, buildMaps("IPv4", [], []), state);
    assert.equal(r.ipvsadmDiff, "-D -t 172.30.0.41:80\n");
    assert.deepEqual(r.bind.remove, ["172.30.0.41"]);
    assert.match(r.ipsetDiff, /^del KUBE-CLUSTER-IP 172\.30\.0\.41,tcp:80$/m);
    assert.match(r.ipsetDiff, /^del KUBE-IPVS-IPS 172\.30\.0\.41$/m);
    state = kernel.apply(r);
    assert.equal(
      kernel.ipvs
        .dump()
        .split("\n")
        .filter((l) => l.startsWith("TCP"))
        .join(),
      "TCP 172.31.9.9:80 rr",
    );
    assert.equal(kernel.bound.size, 0);
  });

  test("the full program rebuilds exactly what the diffs built", () => {
    const kernel = new FakeKernel(["192.168.0.2"]);
    let state = kernel.apply(renderIPVS(ipvsOptions(), cluster(eps("10.180.0.1", "10.180.0.2"))));
    const r = renderIPVS(ipvsOptions(), cluster(eps("10.180.0.2", "10.180.0.3")), state);
    state = kernel.apply(r);
    const fresh = new FakeIPVS();
    fresh.restore(r.ipvsadmFull);
    assert.equal(fresh.dump(), kernel.ipvs.dump());
    assert.deepEqual(state.table, kernel.ipvs.table());
  });

  test("affinity changed: the virtual server is edited in place", () => {
    const kernel = new FakeKernel(["192.168.0.2"]);
    const state = kernel.apply(renderIPVS(ipvsOptions(), cluster(eps("10.180.0.1"))));
    const sticky = buildMaps(
      "IPv4",
      [makeService("ns1", "svc1", { clusterIP: "172.30.0.41", sessionAffinity: "ClientIP", ports: tcp80 })],
      [makeSlice("ns1", "svc1", "a", eps("10.180.0.1"), p80)],
    );
    const r = renderIPVS(ipvsOptions(), sticky, state);
    assert.equal(r.ipvsadmDiff, "-E -t 172.30.0.41:80 -s rr -p 10800\n");
    kernel.apply(r);
    assert.match(
      kernel.ipvs.dump(),
      /TCP 172\.30\.0\.41:80 rr persistent 10800\n {2}-> 10\.180\.0\.1:80 Masq 1/,
    );
  });

  test("inputs are not mutated", () => {
    const maps = cluster(eps("10.180.0.1"));
    const before = structuredClone({ s: [...maps.services], e: [...maps.endpoints] });
    const first = renderIPVS(ipvsOptions(), maps);
    const snapshot = structuredClone({ t: [...first.state.table], i: [...first.state.ipsets] });
    renderIPVS(ipvsOptions(), cluster(eps("10.180.0.2")), first.state);
    assert.deepEqual(structuredClone({ s: [...maps.services], e: [...maps.endpoints] }), before);
    assert.deepEqual(structuredClone({ t: [...first.state.table], i: [...first.state.ipsets] }), snapshot);
  });
});

describe("FakeIPVS", () => {
  test("refuses a real server without its virtual server, and applies nothing of a failed program", () => {
    const ipvs = new FakeIPVS();
    ipvs.restore("-A -t 172.30.0.41:80 -s rr\n");
    const before = ipvs.dump();
    assert.throws(
      () =>
        ipvs.restore(
          "-a -t 172.30.0.41:80 -r 10.0.0.1:80 -m -w 1\n-a -t 172.30.0.99:80 -r 10.0.0.1:80 -m -w 1\n",
        ),
      (e: unknown) => e instanceof IPVSError && e.line === 2 && /no virtual server/.test(e.message),
    );
    assert.equal(ipvs.dump(), before);
    assert.throws(() => ipvs.restore("-A -t 172.30.0.41:80 -s rr\n"), /exists/);
    assert.throws(() => ipvs.restore("-d -t 172.30.0.41:80 -r 10.0.0.9:80\n"), /no real server/);
    assert.throws(() => ipvs.restore("-D -u 172.30.0.41:80\n"), /no virtual server/);
  });
});

/** The kernel as it is (an earlier run's leftovers), as the state of a first sync. */
function emptyWith(kernel: FakeKernel): IPVSState {
  return { table: kernel.ipvs.table(), ipsets: new Map(), bound: new Set() };
}
