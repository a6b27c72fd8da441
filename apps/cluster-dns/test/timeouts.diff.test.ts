import assert from "node:assert/strict";
import * as net from "node:net";
import { after, before, describe, test } from "node:test";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";
import { compareQueries } from "./helpers/compare.js";

// The timeouts plugin, compared with CoreDNS's binary: answers are unchanged, and a TCP connection that never
// sends a query is closed by both after `read 1s` (not the default 3 s).
const skip = differentialSkip();

/** Milliseconds from connecting until the server closes the connection. */
function closeAfter(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    socket.on("error", reject);
    socket.on("close", () => resolve(Date.now() - started));
    socket.resume();
  });
}

describe("timeouts, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  before(async () => {
    pair = await startPair(`.:{{PORT}} {
    timeouts {
        read 1s
        idle 1s
        write 2s
    }
    hosts {
        10.0.0.1 a.example.org
    }
}
`);
  });
  after(() => pair?.stop());
  compareQueries(
    () => pair,
    [
      ["a.example.org", "A"],
      ["a.example.org", "A", "+tcp"],
    ],
  );

  test("a silent TCP connection is closed after the read timeout by both", async () => {
    const [ours, coredns] = await Promise.all([closeAfter(pair.ours.port), closeAfter(pair.coredns.port)]);
    for (const [name, ms] of [
      ["ours", ours],
      ["coredns", coredns],
    ] as const)
      assert.ok(ms >= 800 && ms < 2500, `${name} closed after ${ms}ms`);
  });
});
