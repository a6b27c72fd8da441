import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sortedKeys } from "../../src/util/sorted-keys.js";

const map = (...keys: string[]) => new Map(keys.map((k) => [k, 0]));

describe("sortedKeys", () => {
  test("sorts, and hands back the previous order when the keys are the same", () => {
    const first = sortedKeys(map("ns/b:p", "ns/a:p", "ns/c:p"));
    assert.deepEqual(first, ["ns/a:p", "ns/b:p", "ns/c:p"]);
    assert.equal(sortedKeys(map("ns/c:p", "ns/a:p", "ns/b:p"), first), first);
  });

  test("sorts again when a key was swapped for another, added or removed", () => {
    const first = sortedKeys(map("a", "b", "c"));
    assert.deepEqual(sortedKeys(map("a", "b", "d"), first), ["a", "b", "d"]);
    assert.deepEqual(sortedKeys(map("a", "b", "c", "0"), first), ["0", "a", "b", "c"]);
    assert.deepEqual(sortedKeys(map("c", "a"), first), ["a", "c"]);
  });
});
