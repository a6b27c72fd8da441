import assert from "node:assert/strict";
import { test } from "node:test";
import type { Pair } from "../../src/testing/differential.js";

/**
 * One test per query: both servers get it from dig and must print the same normalised answer. `expect`, when
 * given, must match CoreDNS's output too, so a case cannot pass by both servers failing the same way;
 * `normalise` takes out what differs by nature (the asker's port in a whoami reply).
 */
export function compareQueries(
  pair: () => Pair,
  queries: readonly (readonly string[])[],
  expect: RegExp = /status: /,
  normalise: (dig: string) => string = (dig) => dig,
): void {
  for (const query of queries)
    test(query.join(" "), async () => {
      const { ours, coredns } = await pair().dig(...query);
      assert.match(coredns, expect);
      assert.equal(normalise(ours), normalise(coredns));
    });
}
