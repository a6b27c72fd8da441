import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Transaction } from "../../src/nftables/transaction.js";

const svc = (n: number) => `service-${n}`;

describe("Transaction.script", () => {
  test("element adds are gathered into one statement per set or map, after what they refer to", () => {
    const tx = new Transaction("ip", "kube-proxy");
    for (const n of [1, 2]) {
      tx.add({ kind: "chain", name: svc(n) });
      tx.add({
        kind: "element",
        map: "service-ips",
        key: [`10.0.0.${n}`, "tcp", "80"],
        value: [`goto ${svc(n)}`],
      });
      tx.add({ kind: "element", set: "cluster-ips", key: [`10.0.0.${n}`] });
      tx.add({ kind: "rule", chain: svc(n), rule: "counter" });
    }
    assert.equal(
      tx.script(),
      [
        "add chain ip kube-proxy service-1",
        "add rule ip kube-proxy service-1 counter",
        "add chain ip kube-proxy service-2",
        "add rule ip kube-proxy service-2 counter",
        "add element ip kube-proxy service-ips { 10.0.0.1 . tcp . 80 : goto service-1, 10.0.0.2 . tcp . 80 : goto service-2 }",
        "add element ip kube-proxy cluster-ips { 10.0.0.1, 10.0.0.2 }",
        "",
      ].join("\n"),
    );
    // toString keeps one statement per operation, in order, as upstream writes them.
    assert.equal(
      tx
        .toString()
        .split("\n")
        .filter((l) => l.startsWith("add element")).length,
      4,
    );
  });

  test("a group is written before anything else touches its set, and all before a chain is deleted", () => {
    const tx = new Transaction("ip", "kube-proxy");
    tx.add({ kind: "element", set: "s", key: ["1.1.1.1"], comment: "a" });
    tx.flush({ kind: "set", name: "s", type: "ipv4_addr" });
    tx.add({ kind: "element", set: "s", key: ["2.2.2.2"] });
    tx.delete({ kind: "element", set: "s", key: ["3.3.3.3"] });
    tx.add({ kind: "element", set: "t", key: ["4.4.4.4"] });
    tx.delete({ kind: "chain", name: "old" });
    tx.add({ kind: "element", set: "t", key: ["5.5.5.5"] });
    assert.equal(
      tx.script(),
      [
        'add element ip kube-proxy s { 1.1.1.1 comment "a" }',
        "flush set ip kube-proxy s",
        "add element ip kube-proxy s { 2.2.2.2 }",
        "delete element ip kube-proxy s { 3.3.3.3 }",
        "add element ip kube-proxy t { 4.4.4.4 }",
        "delete chain ip kube-proxy old",
        "add element ip kube-proxy t { 5.5.5.5 }",
        "",
      ].join("\n"),
    );
  });

  test("a builder error is kept as a trailing comment, as in toString", () => {
    const tx = new Transaction("ip", "kube-proxy");
    tx.add({ kind: "element", set: "s", key: ["1.1.1.1"] });
    tx.flush({ kind: "element", set: "s", key: ["1.1.1.1"] });
    assert.match(
      tx.script(),
      /^add element ip kube-proxy s \{ 1\.1\.1\.1 \}\n# ERROR: nftables: flush element/,
    );
  });
});
