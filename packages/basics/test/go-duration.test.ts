import assert from "node:assert/strict";
import { test } from "node:test";
import { formatGoDuration, parseGoDuration } from "../src/go-duration.js";

test("formatGoDuration writes what Go's Duration.String() writes, and parses back", () => {
  // Go: fmt.Println(30*time.Second, 15*time.Minute, 24*time.Hour, ...)
  const cases: [number, string][] = [
    [0, "0s"],
    [250, "250ms"],
    [1000, "1s"],
    [1500, "1.5s"],
    [30_000, "30s"],
    [90_000, "1m30s"],
    [900_000, "15m0s"],
    [3_600_000, "1h0m0s"],
    [86_400_000, "24h0m0s"],
    [-2000, "-2s"],
  ];
  for (const [ms, text] of cases) {
    assert.equal(formatGoDuration(ms), text, `${ms} ms`);
    assert.equal(parseGoDuration(text), ms, text);
  }
});
