import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Handler } from "../../src/plugin/handler.js";
import { LoadBalanceHandler } from "../../src/plugins/loadbalance/loadbalance.js";
import { roundRobin } from "../../src/plugins/loadbalance/shuffle.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { formatRecord, parseRecord } from "../../src/wire/presentation.js";

const records = [
  "a.example.org. 5 IN A 10.0.0.1",
  "a.example.org. 5 IN A 10.0.0.2",
  "a.example.org. 5 IN AAAA fd00::3",
  "a.example.org. 5 IN MX 10 mx1.example.org.",
  "a.example.org. 5 IN MX 20 mx2.example.org.",
  'a.example.org. 5 IN TXT "x"',
  "a.example.org. 5 IN CNAME b.example.org.",
].map(parseRecord);

describe("loadbalance", () => {
  test("round_robin order: CNAME, others, addresses shuffled, MX shuffled", () => {
    // random() returning 0 always moves the last element to the front: a deterministic permutation.
    const out = roundRobin(records, () => 0).map(formatRecord);
    assert.deepEqual(out, [
      "a.example.org. 5 IN CNAME b.example.org.",
      'a.example.org. 5 IN TXT "x"',
      "a.example.org. 5 IN A 10.0.0.2",
      "a.example.org. 5 IN AAAA fd00::3",
      "a.example.org. 5 IN A 10.0.0.1",
      "a.example.org. 5 IN MX 20 mx2.example.org.",
      "a.example.org. 5 IN MX 10 mx1.example.org.",
    ]);
  });

  test("every permutation of three addresses shows up with a real random source", () => {
    const three = records.slice(0, 3);
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++)
      seen.add(
        roundRobin(three, (n) => Math.floor(Math.random() * n))
          .map((r) => r.data)
          .join(","),
      );
    assert.equal(seen.size, 6);
  });

  test("only NOERROR replies are shuffled, and the reply from next is not mutated", async () => {
    let sent: Message | undefined;
    const fixed = replyTo(newQuery("a.example.org.", 1));
    fixed.answer = records.slice(0, 2);
    const next: Handler = {
      name: "fixed",
      serveDNS: async (_c, w, r) => {
        w.write(r.question[0]?.name === "nx.example.org." ? { ...fixed, rcode: 3 } : fixed);
        return { rcode: 0 };
      },
    };
    const lb = new LoadBalanceHandler(next, () => 0);
    const w = {
      transport: "udp" as const,
      remote: { address: "127.0.0.1", port: 1, family: "IPv4" as const },
      write: (m: Message) => {
        sent = m;
      },
    };
    await lb.serveDNS({ zone: ".", server: "" }, w, newQuery("a.example.org.", 1));
    assert.deepEqual(
      sent?.answer.map((r) => r.data),
      ["10.0.0.2", "10.0.0.1"],
    );
    assert.deepEqual(
      fixed.answer.map((r) => r.data),
      ["10.0.0.1", "10.0.0.2"],
    );
    await lb.serveDNS({ zone: ".", server: "" }, w, newQuery("nx.example.org.", 1));
    assert.equal(sent?.answer, fixed.answer);
  });
});
