// Partial ("minimal") syncs and stale-chain cleanup, applied to a FakeIPTables.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { FakeIPTables, IPTablesError } from "../../src/iptables/fake.js";
import { type IPTablesState, renderIPTables } from "../../src/iptables/render.js";
import { buildMaps, iptOptions } from "../../src/testing/fixtures.js";
import { goldenServices, goldenSlices } from "../golden-cluster.js";

const services = goldenServices((n) => `172.30.0.${n}`);

function withSvc1Endpoints(addresses: string[]): EndpointSlice[] {
  return goldenSlices().map((s) =>
    s.metadata?.name === "svc1-a" ? { ...s, endpoints: addresses.map((a) => ({ addresses: [a] })) } : s,
  );
}

function fullSync(slices: EndpointSlice[], svcs = services): { ipt: FakeIPTables; state: IPTablesState } {
  const ipt = new FakeIPTables();
  const r = renderIPTables(iptOptions(), { ...buildMaps("IPv4", svcs, slices), now: 0 });
  ipt.restore(r.restore);
  return { ipt, state: r.state };
}

describe("iptables partial sync", () => {
  test("an endpoint change rewrites only that service's chains and equals a full sync", () => {
    const { ipt, state } = fullSync(goldenSlices());
    const slices = withSvc1Endpoints(["10.180.0.1", "10.180.1.1", "10.180.1.11"]);
    const r = renderIPTables(
      iptOptions(),
      { ...buildMaps("IPv4", services, slices), changedServices: new Set(["ns1/svc1"]), now: 1000 },
      state,
    );
    assert.equal(r.fullSync, false);
    const declared = r.restore.split("\n").filter((l) => /^:KUBE-(SVC|SVL|EXT|FW|SEP)-/.test(l));
    // svc1's KUBE-SVC chain and its three endpoint chains; nothing of other services.
    assert.equal(declared.length, 4);
    assert.ok(r.restore.includes(":KUBE-SVC-XPGD46QRK7WJZT7O "));
    assert.ok(!r.restore.includes("ns5/svc5:p80 -> "));
    // The top-level chains did not change, so they are left out (upstream rewrites them every time).
    assert.ok(!r.restore.includes(":KUBE-SERVICES "));
    assert.ok(!r.restore.includes("*filter"));
    ipt.restore(r.restore);
    assert.equal(ipt.dump(), fullSync(slices).ipt.dump());
  });

  test("a change to the top-level chains rewrites them whole", () => {
    const { ipt, state } = fullSync(goldenSlices());
    // svc1 loses every endpoint: its KUBE-SERVICES jump goes, a REJECT appears in filter.
    const slices = withSvc1Endpoints([]);
    const r = renderIPTables(
      iptOptions(),
      { ...buildMaps("IPv4", services, slices), changedServices: new Set(["ns1/svc1"]), now: 1000 },
      state,
    );
    assert.ok(r.restore.includes(":KUBE-SERVICES "));
    assert.ok(r.restore.includes("ns5/svc5:p80 loadbalancer IP"), "every Service's dispatch rules");
    assert.ok(r.restore.includes("*filter") && r.restore.includes("ns1/svc1:p80 has no endpoints"));
    ipt.restore(r.restore);
    assert.equal(ipt.dump(), fullSync(slices).ipt.dump());
  });

  test("a removed endpoint's chain is flushed and deleted", () => {
    const { ipt, state } = fullSync(goldenSlices());
    const slices = withSvc1Endpoints(["10.180.0.1"]);
    const r = renderIPTables(
      iptOptions(),
      { ...buildMaps("IPv4", services, slices), changedServices: new Set(["ns1/svc1"]), now: 1000 },
      state,
    );
    const removed = [...state.natChains].filter((c) => !r.state.natChains.has(c));
    assert.equal(removed.length, 1);
    assert.ok(r.restore.includes(`:${removed[0]} - [0:0]`));
    assert.ok(r.restore.includes(`-X ${removed[0]}`));
    ipt.restore(r.restore);
    assert.equal(ipt.dump(), fullSync(slices).ipt.dump());
  });

  test("a deleted service loses every chain", () => {
    const { ipt, state } = fullSync(goldenSlices());
    const svcs = services.filter((s) => s.metadata?.name !== "svc5");
    const r = renderIPTables(
      iptOptions(),
      { ...buildMaps("IPv4", svcs, goldenSlices()), changedServices: new Set(["ns5/svc5"]), now: 1000 },
      state,
    );
    ipt.restore(r.restore);
    assert.equal(ipt.dump(), fullSync(goldenSlices(), svcs).ipt.dump());
    assert.ok(!ipt.chains("nat").some((c) => c.endsWith("NUKIZ6OKUXPJNT4C")));
  });

  test("leftover chains of an earlier run are deleted on the first sync", () => {
    const ipt = new FakeIPTables();
    ipt.restore("*nat\n:KUBE-SEP-LEFTOVER00000000 - [0:0]\n:OTHER-CHAIN - [0:0]\nCOMMIT\n");
    const r = renderIPTables(iptOptions(), {
      ...buildMaps("IPv4", services, goldenSlices()),
      now: 0,
      existingNATChains: ipt.chains("nat"),
    });
    ipt.restore(r.restore);
    assert.ok(!ipt.chains("nat").includes("KUBE-SEP-LEFTOVER00000000"));
    assert.ok(ipt.chains("nat").includes("OTHER-CHAIN"), "chains that are not ours stay");
  });

  test("in large-cluster mode stale chains wait for the sync period", () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `10.180.${2 + (i >> 8)}.${i & 255}`);
    const first = renderIPTables(iptOptions(), {
      ...buildMaps("IPv4", services, withSvc1Endpoints(many(1001))),
      now: 0,
    });
    assert.equal(first.largeClusterMode, true);
    const next = (now: number, state: IPTablesState) =>
      renderIPTables(
        iptOptions(),
        {
          ...buildMaps("IPv4", services, withSvc1Endpoints(many(1005).slice(1))),
          changedServices: new Set(["ns1/svc1"]),
          now,
        },
        state,
      );
    const soon = next(10_000, first.state);
    assert.ok(!soon.restore.includes("-X "), "no cleanup within the sync period");
    assert.ok(soon.state.natChains.size > first.state.natChains.size - 1, "stale chain still tracked");
    const later = next(40_000, soon.state);
    assert.equal(later.restore.split("\n").filter((l) => l.startsWith("-X ")).length, 1);
  });

  test("a service chain's reference to a missing chain makes the restore fail atomically", () => {
    const { ipt } = fullSync(goldenSlices());
    const before = ipt.dump();
    assert.throws(
      () =>
        ipt.restore(
          "*nat\n-A KUBE-SERVICES -j KUBE-SVC-MISSING0000000000\nCOMMIT\n*filter\n:KUBE-NEW - [0:0]\nCOMMIT\n",
        ),
      IPTablesError,
    );
    assert.equal(ipt.dump(), before);
  });
});

describe("FakeIPTables", () => {
  test("--noflush keeps chains the input does not mention; without it the table is replaced", () => {
    const ipt = new FakeIPTables();
    ipt.restore("*nat\n:A - [0:0]\n:B - [0:0]\n-A B -j A\nCOMMIT\n");
    ipt.restore("*nat\n:A - [0:0]\n-A A -j RETURN\nCOMMIT\n");
    assert.deepEqual(ipt.rules("nat", "B"), ["-j A"]);
    assert.deepEqual(ipt.rules("nat", "A"), ["-j RETURN"]);
    ipt.restore("*nat\n:A - [0:0]\nCOMMIT\n", { noflush: false });
    assert.equal(ipt.rules("nat", "B"), undefined);
  });

  test("a chain that is still used or not empty cannot be deleted", () => {
    const ipt = new FakeIPTables();
    ipt.restore("*nat\n:A - [0:0]\n:B - [0:0]\n-A B -j A\nCOMMIT\n");
    assert.throws(() => ipt.restore("*nat\n:A - [0:0]\n-X A\nCOMMIT\n"), /missing chain A/);
    assert.throws(() => ipt.restore("*nat\n-X B\nCOMMIT\n"), /not empty/);
  });

  test("ensureRule prepends once", () => {
    const ipt = new FakeIPTables();
    ipt.ensureChain("filter", "X");
    assert.equal(
      ipt.ensureRule("prepend", "filter", "INPUT", ["-m", "comment", "--comment", "a b", "-j", "X"]),
      false,
    );
    assert.equal(
      ipt.ensureRule("prepend", "filter", "INPUT", ["-m", "comment", "--comment", "a b", "-j", "X"]),
      true,
    );
    assert.deepEqual(ipt.rules("filter", "INPUT"), ['-m comment --comment "a b" -j X']);
  });
});
