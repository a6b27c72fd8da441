import assert from "node:assert/strict";
import { test } from "node:test";
import { formatTime } from "../../src/util/meta-time.js";

test("formatTime writes a meta/v1 Time: UTC, to the second, as the apiserver does", () => {
  // Go: metav1.NewTime(time.UnixMilli(...)).MarshalJSON() truncates, it does not round.
  assert.equal(formatTime(Date.UTC(2006, 0, 2, 15, 4, 5, 999)), "2006-01-02T15:04:05Z");
  assert.equal(formatTime(Date.UTC(2024, 0, 1)), "2024-01-01T00:00:00Z");
});
