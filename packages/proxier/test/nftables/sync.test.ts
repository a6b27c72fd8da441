// Full vs partial syncs, stale chain handling, and the fake's refusals.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isNotFound } from "../../src/nftables/errors.js";
import { FakeNFTables } from "../../src/nftables/fake.js";
import { renderNFTables } from "../../src/nftables/render.js";
import { Transaction } from "../../src/nftables/transaction.js";
import { buildMaps, makeService, makeSlice, NODE_NAME, nftOptions } from "../../src/testing/fixtures.js";

const p80 = [{ name: "p80", port: 80 }];
const svc = (name: string, ip: string) =>
  makeService("ns1", name, { clusterIP: ip, ports: [{ name: "p80", port: 80, protocol: "TCP" }] });

describe("nftables sync", () => {
  test("partial sync touches only the changed service, and ends equal to a full sync", () => {
    const nft = new FakeNFTables("ip", "kube-proxy");
    const opts = nftOptions();
    const local = (ip: string) => ({ addresses: [ip], nodeName: NODE_NAME });
    const first = buildMaps(
      "IPv4",
      [svc("a", "172.30.0.41"), svc("b", "172.30.0.42")],
      [
        makeSlice("ns1", "a", "x", [local("10.180.0.1")], p80),
        makeSlice("ns1", "b", "x", [local("10.180.0.2")], p80),
      ],
    );
    const r1 = renderNFTables(opts, { ...first, now: 0 });
    nft.run(r1.transaction);

    const second = buildMaps(
      "IPv4",
      [svc("a", "172.30.0.41"), svc("b", "172.30.0.42")],
      [
        makeSlice("ns1", "a", "x", [local("10.180.0.1")], p80),
        makeSlice("ns1", "b", "x", [local("10.180.0.3")], p80),
      ],
    );
    const r2 = renderNFTables(opts, { ...second, changedServices: new Set(["ns1/b"]), now: 100 }, r1.state);
    assert.equal(r2.fullSync, false);
    const script = r2.transaction.toString();
    assert.ok(!script.includes("ns1/a/"), `unchanged service was rewritten:\n${script}`);
    assert.ok(!script.includes("10.180.0.1"), `unchanged hairpin element was touched:\n${script}`);
    // The policy chain is rewritten in place; there are no endpoint chains to go stale.
    assert.match(script, /flush chain ip kube-proxy service-\w+-ns1\/b\/tcp\/p80\n/);
    assert.match(script, /service-\w+-ns1\/b\/tcp\/p80 meta l4proto tcp dnat to 10\.180\.0\.3:80/);
    assert.match(
      script,
      /delete element ip kube-proxy hairpin-connections \{ 10\.180\.0\.2 \. 10\.180\.0\.2 \. tcp \. 80 \}/,
    );
    assert.match(
      script,
      /add element ip kube-proxy hairpin-connections \{ 10\.180\.0\.3 \. 10\.180\.0\.3 \. tcp \. 80 \}/,
    );
    assert.equal(r2.state.staleChains.size, 0);
    nft.run(r2.transaction);
    const fresh = new FakeNFTables("ip", "kube-proxy");
    fresh.run(renderNFTables(opts, { ...second, now: 0 }).transaction);
    assert.equal(nft.dump(), fresh.dump());

    // Deleting a service leaves its chain flushed; a second later the cleanup deletes it.
    const third = buildMaps(
      "IPv4",
      [svc("a", "172.30.0.41")],
      [makeSlice("ns1", "a", "x", [local("10.180.0.1")], p80)],
    );
    const r3 = renderNFTables(opts, { ...third, changedServices: new Set(["ns1/b"]), now: 200 }, r2.state);
    assert.match(r3.transaction.toString(), /flush chain ip kube-proxy service-\w+-ns1\/b\/tcp\/p80/);
    nft.run(r3.transaction);
    const r4 = renderNFTables(opts, { ...third, changedServices: new Set(), now: 1300 }, r3.state);
    assert.ok(r4.cleanup);
    nft.run(r4.cleanup);
    nft.run(r4.transaction);
    assert.equal(r4.transaction.toString(), "");
    const freshThird = new FakeNFTables("ip", "kube-proxy");
    freshThird.run(renderNFTables(opts, { ...third, now: 0 }).transaction);
    assert.equal(nft.dump(), freshThird.dump());
  });

  test("losing an affinity endpoint flushes its chain and deletes its affinity set", () => {
    const opts = nftOptions();
    const sticky = makeService("ns1", "a", {
      clusterIP: "172.30.0.41",
      sessionAffinity: "ClientIP",
      ports: [{ name: "p80", port: 80, protocol: "TCP" }],
    });
    const eps = (ips: string[]) => [
      makeSlice(
        "ns1",
        "a",
        "x",
        ips.map((ip) => ({ addresses: [ip] })),
        p80,
      ),
    ];
    const nft = new FakeNFTables("ip", "kube-proxy");
    const r1 = renderNFTables(opts, {
      ...buildMaps("IPv4", [sticky], eps(["10.180.0.1", "10.180.0.2"])),
      now: 0,
    });
    nft.run(r1.transaction);
    const r2 = renderNFTables(
      opts,
      { ...buildMaps("IPv4", [sticky], eps(["10.180.0.1"])), changedServices: new Set(["ns1/a"]), now: 10 },
      r1.state,
    );
    const script = r2.transaction.toString();
    assert.match(script, /flush chain ip kube-proxy endpoint-\w+-ns1\/a\/tcp\/p80__10\.180\.0\.2\/80/);
    assert.match(script, /delete set ip kube-proxy affinity-\w+-ns1\/a\/tcp\/p80__10\.180\.0\.2\/80/);
    nft.run(r2.transaction);
    assert.deepEqual(
      [...r2.state.staleChains.keys()].map((c) => c.replace(/-\w+-/, "-H-")),
      ["endpoint-H-ns1/a/tcp/p80__10.180.0.2/80"],
    );
  });

  test("a full sync rewrites chains but only the elements that differ", () => {
    const opts = nftOptions();
    const maps = buildMaps(
      "IPv4",
      [svc("a", "172.30.0.41")],
      [makeSlice("ns1", "a", "x", [{ addresses: ["10.180.0.1"], nodeName: NODE_NAME }], p80)],
    );
    const nft = new FakeNFTables("ip", "kube-proxy");
    const r1 = renderNFTables(opts, { ...maps, now: 0 });
    nft.run(r1.transaction);
    const before = nft.dump();
    // No changed-service set: a forced full sync from a known previous state.
    const r2 = renderNFTables(opts, { ...maps, now: 10 }, r1.state);
    assert.equal(r2.fullSync, true);
    const script = r2.transaction.toString();
    assert.match(script, /flush chain ip kube-proxy service-\w+-ns1\/a\/tcp\/p80/);
    assert.doesNotMatch(script, /flush (set|map) ip kube-proxy (?!nodeport-ips)/);
    assert.doesNotMatch(script, /element ip kube-proxy (?!nodeport-ips)/);
    nft.run(r2.transaction);
    assert.equal(nft.dump(), before);
  });

  test("first sync diffs against the elements found in the kernel, or flushes without them", () => {
    const opts = nftOptions();
    const maps = buildMaps(
      "IPv4",
      [svc("a", "172.30.0.41")],
      [makeSlice("ns1", "a", "x", [{ addresses: ["10.180.0.1"] }], p80)],
    );
    const nft = new FakeNFTables("ip", "kube-proxy");
    const stale = buildMaps("IPv4", [svc("a", "172.30.0.41"), svc("b", "172.30.0.42")], []);
    const earlier = renderNFTables(opts, { ...stale, now: 0 });
    nft.run(earlier.transaction);
    const existing = {
      chains: [...earlier.state.serviceChains],
      sets: [...earlier.state.affinitySets],
      elements: earlier.state.elements,
    };
    const r = renderNFTables(opts, { ...maps, existing, now: 5 });
    const script = r.transaction.toString();
    assert.doesNotMatch(script, /flush (set|map) ip kube-proxy (?!nodeport-ips)/);
    assert.doesNotMatch(script, /add element ip kube-proxy cluster-ips \{ 172\.30\.0\.41 \}/);
    assert.match(script, /delete element ip kube-proxy cluster-ips \{ 172\.30\.0\.42 \}/);
    nft.run(r.transaction);
    const fresh = new FakeNFTables("ip", "kube-proxy");
    fresh.run(renderNFTables(opts, { ...maps, now: 0 }).transaction);
    assert.equal(nft.dump(), fresh.dump());

    // Not knowing what the kernel holds, the containers are flushed and refilled.
    const blind = renderNFTables(opts, { ...maps, now: 5 }).transaction.toString();
    assert.match(blind, /flush set ip kube-proxy hairpin-connections/);
    assert.match(blind, /flush map ip kube-proxy service-ips/);
  });

  test("stale chains are not deleted before a second has passed", () => {
    const opts = nftOptions();
    const r1 = renderNFTables(opts, {
      ...buildMaps(
        "IPv4",
        [svc("a", "172.30.0.41"), svc("b", "172.30.0.42")],
        [
          makeSlice("ns1", "a", "x", [{ addresses: ["10.180.0.1"] }], p80),
          makeSlice("ns1", "b", "x", [{ addresses: ["10.180.0.2"] }], p80),
        ],
      ),
      now: 0,
    });
    const empty = buildMaps("IPv4", [], []);
    const r2 = renderNFTables(
      opts,
      { ...empty, changedServices: new Set(["ns1/a", "ns1/b"]), now: 10 },
      r1.state,
    );
    assert.equal(r2.state.staleChains.size, 2);
    const r3 = renderNFTables(opts, { ...empty, changedServices: new Set(), now: 500 }, r2.state);
    assert.equal(r3.cleanup, null);
    // Like kube-proxy, every sync re-flushes and re-stamps chains that are still stale.
    assert.equal(r3.state.staleChains.get([...r3.state.staleChains.keys()][0] ?? ""), 500);
    const r4 = renderNFTables(opts, { ...empty, changedServices: new Set(), now: 1500 }, r3.state);
    assert.equal(r4.cleanup?.size, 2);
    assert.equal(r4.state.serviceChains.size, 0);
  });

  test("changed map element value is deleted and re-added", () => {
    const opts = nftOptions();
    const nft = new FakeNFTables("ip", "kube-proxy");
    const r1 = renderNFTables(opts, { ...buildMaps("IPv4", [svc("a", "172.30.0.41")], []), now: 0 });
    nft.run(r1.transaction);
    const withEps = buildMaps(
      "IPv4",
      [svc("a", "172.30.0.41")],
      [makeSlice("ns1", "a", "x", [{ addresses: ["10.180.0.1"] }], p80)],
    );
    const r2 = renderNFTables(opts, { ...withEps, changedServices: new Set(["ns1/a"]), now: 1 }, r1.state);
    assert.match(
      r2.transaction.toString(),
      /delete element ip kube-proxy no-endpoint-services \{ 172\.30\.0\.41 \. tcp \. 80 \}/,
    );
    nft.run(r2.transaction);
    assert.match(nft.dump(), /service-ips \{ 172\.30\.0\.41 \. tcp \. 80 : goto service-/);
  });
});

describe("fake nft", () => {
  test("rejects a jump to a missing chain and leaves the table unchanged", () => {
    const nft = new FakeNFTables("ip", "kube-proxy");
    const ok = new Transaction("ip", "kube-proxy");
    ok.add({ kind: "table" });
    ok.add({ kind: "chain", name: "a" });
    nft.run(ok);
    const before = nft.dump();
    const bad = new Transaction("ip", "kube-proxy");
    bad.add({ kind: "chain", name: "b" });
    bad.add({ kind: "rule", chain: "a", rule: "jump missing" });
    assert.throws(
      () => nft.run(bad),
      (e) => isNotFound(e),
    );
    assert.equal(nft.dump(), before);
  });

  test("rejects references to missing sets and deleting referenced chains", () => {
    const nft = new FakeNFTables("ip", "kube-proxy");
    const tx = new Transaction("ip", "kube-proxy");
    tx.add({ kind: "table" });
    tx.add({ kind: "chain", name: "a" });
    tx.add({ kind: "rule", chain: "a", rule: "ip daddr @nope drop" });
    assert.throws(() => nft.run(tx), /no such set or map nope/);
    const tx2 = new Transaction("ip", "kube-proxy");
    tx2.add({ kind: "table" });
    tx2.add({ kind: "chain", name: "a" });
    tx2.add({ kind: "chain", name: "b" });
    tx2.add({ kind: "rule", chain: "a", rule: "goto b" });
    nft.run(tx2);
    const del = new Transaction("ip", "kube-proxy");
    del.delete({ kind: "chain", name: "b" });
    assert.throws(() => nft.run(del), /still referenced/);
  });

  test("like the kernel, deletes a chain together with its rules unless it is referenced", () => {
    const nft = new FakeNFTables("ip", "kube-proxy");
    const tx = new Transaction("ip", "kube-proxy");
    tx.add({ kind: "table" });
    tx.add({ kind: "chain", name: "a" });
    tx.add({ kind: "rule", chain: "a", rule: "drop" });
    nft.run(tx);
    const del = new Transaction("ip", "kube-proxy");
    del.delete({ kind: "chain", name: "a" });
    nft.run(del);
    assert.equal(nft.state?.chains.has("a"), false);
  });

  test("the builder keeps the first error and reports it in the script", () => {
    const tx = new Transaction("ip", "kube-proxy");
    tx.add({ kind: "chain", name: "bad name!" });
    tx.add({ kind: "chain", name: "fine" });
    assert.equal(tx.size, 0);
    assert.match(tx.toString(), /^# ERROR: .*bad name!/);
    assert.throws(() => new FakeNFTables("ip", "kube-proxy").run(tx), /characters nft does not allow/);
  });
});
