// stageChains: which chains of a transaction go ahead in staging transactions, and that nothing is
// lost, duplicated or reordered on the way. The kernel side (same table as one batch, a refused
// last batch leaving nothing) is in test/kernel/netlink-writer.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { stageableChains, stageChains } from "../../src/nftables/staging.js";
import { Transaction } from "../../src/nftables/transaction.js";
import { goldenNFTablesFullSync } from "../golden-cluster.js";

const lines = (tx: Transaction) => tx.toString().trimEnd().split("\n");

function sample(): Transaction {
  const tx = new Transaction("ip", "t");
  tx.add({ kind: "table" });
  tx.add({ kind: "chain", name: "base", type: "nat", hook: "output", priority: -100 });
  tx.add({ kind: "set", name: "s", type: "ipv4_addr" });
  for (const c of ["a", "b", "c", "d", "e", "f", "g", "h"]) {
    tx.add({ kind: "chain", name: c });
    tx.flush({ kind: "chain", name: c });
  }
  tx.add({ kind: "rule", chain: "a", rule: "meta l4proto tcp dnat to 10.0.0.1:80" });
  tx.add({
    kind: "rule",
    chain: "b",
    rule: "meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.1 . 80, 1 : 10.0.0.2 . 80 }",
  });
  tx.add({ kind: "rule", chain: "c", rule: "ip saddr @s drop" }); // a named set
  tx.add({ kind: "rule", chain: "d", rule: "goto a" }); // a chain
  tx.add({ kind: "rule", chain: "e", rule: "counter name x" }); // a named object
  tx.insert({ kind: "rule", chain: "f", rule: "drop" }); // inserted, not appended
  tx.delete({ kind: "chain", name: "g" });
  tx.add({ kind: "rule", chain: "h", rule: "ip daddr { 10.0.0.0/8 } drop" });
  tx.add({ kind: "rule", chain: "base", rule: "jump a" });
  tx.add({ kind: "element", map: "m", key: ["10.0.0.1"], value: ["goto", "b"] });
  return tx;
}

describe("stageChains", () => {
  test("stages only new regular chains whose rules name nothing of the table", () => {
    assert.deepEqual(stageableChains(sample(), new Set()), ["a", "b", "h"]);
    // one the kernel holds already may be jumped to: it stays in the atomic transaction
    assert.deepEqual(stageableChains(sample(), new Set(["b"])), ["a", "h"]);
  });

  test("moves each staged chain's add and rules, drops its flush, keeps everything else in order", () => {
    const tx = sample();
    const split = stageChains(tx, { kernelChains: new Set(), minChains: 2, chainsPerStage: 2 });
    assert.ok(split);
    assert.deepEqual(
      split.stages.map((s) => lines(s)),
      [
        [
          "add table ip t",
          "add chain ip t a",
          "add chain ip t b",
          "add rule ip t a meta l4proto tcp dnat to 10.0.0.1:80",
          "add rule ip t b meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.1 . 80, 1 : 10.0.0.2 . 80 }",
        ],
        ["add table ip t", "add chain ip t h", "add rule ip t h ip daddr { 10.0.0.0/8 } drop"],
      ],
    );
    const staged = new Set(split.stages.flatMap((s) => lines(s).slice(1)));
    const dropped = ["flush chain ip t a", "flush chain ip t b", "flush chain ip t h"];
    assert.deepEqual(
      lines(split.main),
      lines(tx).filter((l) => !staged.has(l) && !dropped.includes(l)),
    );
    assert.ok(lines(split.main).includes("add rule ip t base jump a"));
  });

  test("declines below the threshold, without `add table`, or with a table deleted", () => {
    assert.equal(stageChains(sample(), { kernelChains: new Set(), minChains: 4, chainsPerStage: 2 }), null);
    const noTable = new Transaction("ip", "t");
    noTable.add({ kind: "chain", name: "a" });
    noTable.add({ kind: "rule", chain: "a", rule: "drop" });
    assert.equal(stageChains(noTable, { kernelChains: new Set(), minChains: 1, chainsPerStage: 1 }), null);
    const deleted = sample();
    deleted.delete({ kind: "table" });
    assert.equal(stageChains(deleted, { kernelChains: new Set(), minChains: 1, chainsPerStage: 1 }), null);
  });

  test("a rendered full sync: new chains with self-contained rules are staged, affinity chains stay", () => {
    const r = goldenNFTablesFullSync();
    const chains = stageableChains(r.transaction, new Set());
    // service chains (their numgen maps are what staging is for), local- and firewall- chains, and
    // the helper that @no-endpoint-services jumps to; no base chain
    assert.ok(chains.filter((c) => c.startsWith("service-")).length > 3, chains.join(" "));
    assert.ok(chains.includes("reject-chain"), chains.join(" "));
    assert.ok(!chains.some((c) => c.startsWith("nat-") || c.startsWith("filter-")), chains.join(" "));
    // affinity chains update their @affinity set: they stay in the last transaction
    const text = r.transaction.toString();
    assert.match(text, /update @affinity/);
    for (const line of text.split("\n").filter((l) => l.includes("update @"))) {
      const chain = line.split(" ")[4] ?? "";
      assert.ok(!chains.includes(chain), chain);
    }
  });
});
