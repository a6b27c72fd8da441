import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { differentialSkip, type Pair, startPair } from "../src/testing/differential.js";

// whoami and the built-in default Corefile, compared with CoreDNS's binary: same start, same dig, same answer.
const skip = differentialSkip();

/** The asker's port differs between the two digs by nature; everything else must match. */
const withoutPort = (s: string) => s.replace(/(SRV 0 0 )\d+ \./g, "$1<port> .");

describe("whoami, against CoreDNS v1.14.7", { skip }, () => {
  for (const [what, corefile, args] of [
    ["whoami in a Corefile", ".:{{PORT}} {\n    whoami\n}\n", []],
    ["no Corefile at all: the default `.:PORT { whoami; log }`", null, ["-dns.port", "{{PORT}}"]],
    ["no Corefile, the port given with -p", null, ["-p", "{{PORT}}"]],
  ] as const) {
    describe(what, () => {
      let pair: Pair;
      before(async () => {
        pair = await startPair(corefile, {}, args);
      });
      after(() => pair?.stop());

      for (const query of [
        ["example.org", "A"],
        ["Example.ORG", "AAAA"],
        [".", "NS"],
        ["a.b.c", "TXT", "+tcp"],
        ["x.example", "MX", "+norecurse"],
      ])
        test(query.join(" "), async () => {
          const { ours, coredns } = await pair.dig(...query);
          assert.match(coredns, /ADDITIONAL SECTION/);
          assert.equal(withoutPort(ours), withoutPort(coredns));
        });
    });
  }
});
