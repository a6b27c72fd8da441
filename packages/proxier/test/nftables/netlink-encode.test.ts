// The netlink writer's encoder without a kernel: the batch it builds reads back as well-formed
// messages, long element lists are split under netlink's 64 KiB attribute limit, interval sets are
// laid out as nft lays them out, and what it does not translate is refused (the applier then uses
// `nft`). That the kernel ends up with nft's table is proven in test/kernel/netlink-writer.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { addressSet } from "../../src/nftables/netlink/anonymous-sets.js";
import { encodeTransaction } from "../../src/nftables/netlink/batch.js";
import {
  ELEM_LIST,
  MSG,
  NFNL_MSG_BATCH_BEGIN,
  NFNL_MSG_BATCH_END,
} from "../../src/nftables/netlink/constants.js";
import { attr, parseAttributes, parseMessages } from "../../src/nftables/netlink/reader.js";
import { prefixOf, UnsupportedSyntax } from "../../src/nftables/netlink/values.js";
import { Transaction } from "../../src/nftables/transaction.js";

let n = 0;
const namer = { next: (kind: "set" | "map") => `__${kind}_test_${n++}` };

function table(): Transaction {
  const tx = new Transaction("ip", "kube-proxy");
  tx.add({ kind: "table", comment: "rules for kube-proxy" });
  tx.add({ kind: "set", name: "cluster-ips", type: "ipv4_addr", comment: "Active ClusterIPs" });
  return tx;
}

const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

describe("netlink batch encoder", () => {
  test("a batch reads back: begin, one message per statement, end, every attribute whole", () => {
    const tx = table();
    tx.add({ kind: "chain", name: "c" });
    tx.add({ kind: "rule", chain: "c", rule: "ip daddr @cluster-ips reject", comment: "Reject" });
    tx.add({ kind: "element", set: "cluster-ips", key: ["10.0.0.1"] });
    const batch = encodeTransaction(tx, namer);
    const messages = parseMessages(batch.buffer);
    assert.deepEqual(
      messages.map((m) => m.type & 0xff),
      [
        NFNL_MSG_BATCH_BEGIN,
        MSG.NEWTABLE,
        MSG.NEWSET,
        MSG.NEWCHAIN,
        MSG.NEWRULE,
        MSG.NEWSETELEM,
        NFNL_MSG_BATCH_END,
      ],
    );
    const total = messages.reduce((sum, m) => sum + 16 + ((m.payload.length + 3) & ~3), 0);
    assert.equal(total, batch.buffer.length);
    for (const m of messages.slice(1, -1)) {
      const attrs = parseAttributes(m.payload, 4);
      assert.equal(
        attrs.reduce((sum, a) => sum + 4 + ((a.value.length + 3) & ~3), 4),
        m.payload.length,
      );
    }
    // sequence numbers name the statement an error answer refers to
    assert.equal(
      batch.describe(messages[4]?.seq ?? 0),
      'add rule ip kube-proxy c ip daddr @cluster-ips reject comment "Reject"',
    );
  });

  test("a long element list is split so no attribute passes 64 KiB", () => {
    const tx = table();
    for (let i = 0; i < 20_000; i++) tx.add({ kind: "element", set: "cluster-ips", key: [ip(i)] });
    const lists = parseMessages(encodeTransaction(tx, namer).buffer).filter(
      (m) => (m.type & 0xff) === MSG.NEWSETELEM,
    );
    assert.ok(lists.length > 1, `${lists.length} messages`);
    let elements = 0;
    for (const m of lists) {
      const list = attr(parseAttributes(m.payload, 4), ELEM_LIST.ELEMENTS);
      assert.ok(list && list.value.length + 4 < 65536);
      elements += parseAttributes(list.value).length;
    }
    assert.equal(elements, 20_000);
  });

  test("a set of prefixes becomes nft's merged, sorted intervals", () => {
    const set = addressSet(
      "ip",
      "daddr",
      ["172.30.0.0/16", "10.0.0.0/8", "10.1.0.0/16"].map((p) => prefixOf(p, "ip")),
    );
    assert.equal(set.size, 5);
    assert.ok(set.elements.kind === "listed");
    assert.deepEqual(
      set.elements.elements.map((e) => `${[...e.key].join(".")}${e.intervalEnd ? " end" : ""}`),
      ["0.0.0.0 end", "10.0.0.0", "11.0.0.0 end", "172.30.0.0", "172.31.0.0 end"],
    );
    // a range to the end of the space has no end element, and says it is open
    const open = addressSet(
      "ip",
      "saddr",
      ["0.0.0.0/1", "128.0.0.0/1"].map((p) => prefixOf(p, "ip")),
    );
    assert.ok(open.elements.kind === "listed");
    assert.equal(open.elements.elements.length, 1);
    assert.equal(open.size, 2);
    assert.ok(open.elements.elements[0]?.userdata);
    // plain addresses make a plain set
    const plain = addressSet(
      "ip",
      "saddr",
      ["1.2.3.4", "1.2.3.5"].map((p) => prefixOf(p, "ip")),
    );
    assert.equal(plain.flags & 0x4, 0);
  });

  test("refuses what it does not translate, so the applier uses nft", () => {
    const refused = (build: (tx: Transaction) => void) => {
      const tx = table();
      build(tx);
      assert.throws(() => encodeTransaction(tx, namer), UnsupportedSyntax);
    };
    refused((tx) => tx.add({ kind: "rule", chain: "c", rule: "tcp dport 22 accept" }));
    refused((tx) => tx.add({ kind: "rule", chain: "c", rule: "ip6 saddr ::1 drop" }));
    refused((tx) => tx.add({ kind: "rule", chain: "c", rule: "ip daddr 010.0.0.1 drop" }));
    refused((tx) => tx.destroy({ kind: "chain", name: "c" }));
    refused((tx) => tx.add({ kind: "element", set: "undeclared", key: ["10.0.0.1"] }));
    refused((tx) => tx.add({ kind: "set", name: "s", type: "ipv4_addr", flags: ["interval"] }));
    assert.throws(() => encodeTransaction(new Transaction("inet", "t"), namer), UnsupportedSyntax);
    // elements of a set an earlier batch declared are fine when its type is known
    const later = new Transaction("ip", "kube-proxy");
    later.add({ kind: "element", set: "undeclared", key: ["10.0.0.1"] });
    assert.ok(encodeTransaction(later, namer, () => "ipv4_addr").buffer.length > 0);
  });
});
