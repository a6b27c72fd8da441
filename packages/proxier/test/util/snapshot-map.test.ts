import assert from "node:assert/strict";
import { test } from "node:test";
import { SnapshotMap } from "../../src/util/snapshot-map.js";

/** A plain Map edited the same way, as the reference. */
function applyToMap<K, V>(map: Map<K, V>, edits: ReadonlyArray<readonly [K, V | undefined]>): Map<K, V> {
  const next = new Map(map);
  for (const [k, v] of edits) {
    next.delete(k);
    if (v !== undefined) next.set(k, v);
  }
  return next;
}

test("each version reads, sizes and iterates as a Map edited the same way; earlier versions are untouched", () => {
  let snap = SnapshotMap.empty<string, number>();
  let ref = new Map<string, number>();
  const versions: Array<[SnapshotMap<string, number>, Map<string, number>]> = [];
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  // Enough rounds to flatten several times (the base grows to a few thousand keys).
  for (let round = 0; round < 400; round++) {
    const edits: Array<[string, number | undefined]> = [];
    for (let i = 0; i < 1 + rand(40); i++) {
      const key = `k${rand(3000)}`;
      edits.push([key, rand(4) === 0 ? undefined : round * 100 + i]);
    }
    snap = snap.with(edits);
    ref = applyToMap(ref, edits);
    versions.push([snap, ref]);
  }
  for (const [s, r] of versions) {
    assert.equal(s.size, r.size);
    assert.deepEqual([...s], [...r]);
    assert.deepEqual([...s.keys()], [...r.keys()]);
    assert.deepEqual([...s.values()], [...r.values()]);
    for (const key of ["k0", "k1", "k17", "k2999", "nope"]) {
      assert.equal(s.get(key), r.get(key));
      assert.equal(s.has(key), r.has(key));
    }
  }
});

test("a key deleted and set again in one edit list iterates last, as Map.delete then Map.set leaves it", () => {
  const a = SnapshotMap.empty<string, number>().with([
    ["a", 1],
    ["b", 2],
    ["c", 3],
  ]);
  const b = a.with([
    ["a", undefined],
    ["a", 9],
    ["b", undefined],
  ]);
  assert.deepEqual(
    [...b],
    [
      ["c", 3],
      ["a", 9],
    ],
  );
  assert.equal(b.size, 2);
  assert.deepEqual(
    [...a],
    [
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ],
  );
  const seen: string[] = [];
  b.forEach((v, k, m) => {
    seen.push(`${k}=${v}/${m.size}`);
  });
  assert.deepEqual(seen, ["c=3/2", "a=9/2"]);
});
