import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  EMPTY_TRACKER,
  shouldSync,
  staleSlices,
  trackerDeleteService,
  trackerExpectDeletion,
  trackerHandleDeletion,
  trackerHas,
  trackerUpdate,
} from "../src/index.js";
import { deepFreeze, makeSlice } from "./fixtures.js";

const at = (name: string, generation: number) => {
  const slice = makeSlice(name, []);
  return deepFreeze({ ...slice, metadata: { ...slice.metadata, generation } });
};

describe("slice tracker", () => {
  test("shouldSync is false for generations the controller wrote, true for newer or unknown", () => {
    const tracker = deepFreeze(trackerUpdate(EMPTY_TRACKER, at("a", 2)));
    assert.equal(shouldSync(tracker, at("a", 2)), false);
    assert.equal(shouldSync(tracker, at("a", 1)), false);
    assert.equal(shouldSync(tracker, at("a", 3)), true);
    assert.equal(shouldSync(tracker, at("b", 1)), true);
    assert.equal(shouldSync(EMPTY_TRACKER, at("a", 1)), true);
  });

  test("staleSlices detects an older generation, a lingering deletion and a missing slice", () => {
    const tracker = deepFreeze(
      trackerExpectDeletion(trackerUpdate(EMPTY_TRACKER, at("a", 2)), at("gone", 1)),
    );
    assert.equal(staleSlices(tracker, "ns/web", [at("a", 2)]), false);
    assert.equal(staleSlices(tracker, "ns/web", [at("a", 3)]), false);
    assert.equal(staleSlices(tracker, "ns/web", [at("a", 1)]), true);
    assert.equal(staleSlices(tracker, "ns/web", [at("a", 2), at("gone", 1)]), true);
    assert.equal(staleSlices(tracker, "ns/web", []), true);
    assert.equal(staleSlices(tracker, "ns/other", []), false);
  });

  test("staleSlices leaves out slices marked for deletion, as upstream does before its check", () => {
    const deleting = (name: string, generation: number) => {
      const slice = at(name, generation);
      return deepFreeze({
        ...slice,
        metadata: { ...slice.metadata, deletionTimestamp: "2026-11-29T10:00:00Z" },
      });
    };
    // Deleted by us and held by a finalizer: not a sign of a stale cache.
    const deleted = trackerExpectDeletion(trackerUpdate(EMPTY_TRACKER, at("a", 2)), at("gone", 1));
    assert.equal(staleSlices(deleted, "ns/web", [at("a", 2), deleting("gone", 1)]), false);
    // Written by us and now being deleted by someone else: as if missing, so the sync waits for the event.
    const written = trackerUpdate(EMPTY_TRACKER, at("a", 2));
    assert.equal(staleSlices(written, "ns/web", [deleting("a", 2)]), true);
  });

  test("handling a deletion says whether it was expected and forgets the slice", () => {
    const tracker = deepFreeze(trackerExpectDeletion(trackerUpdate(EMPTY_TRACKER, at("a", 2)), at("b", 1)));
    const expected = trackerHandleDeletion(tracker, at("b", 1));
    assert.equal(expected.expected, true);
    assert.equal(trackerHas(expected.tracker, at("b", 1)), false);
    const surprise = trackerHandleDeletion(tracker, at("a", 2));
    assert.equal(surprise.expected, false);
    assert.equal(trackerHas(surprise.tracker, at("a", 2)), false);
    assert.equal(trackerHas(tracker, at("a", 2)), true);
  });

  test("deleting the Service forgets all its slices", () => {
    const tracker = trackerDeleteService(trackerUpdate(EMPTY_TRACKER, at("a", 1)), "ns/web");
    assert.equal(trackerHas(tracker, at("a", 1)), false);
    assert.equal(staleSlices(tracker, "ns/web", []), false);
  });
});
