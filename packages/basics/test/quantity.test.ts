import assert from "node:assert/strict";
import { test } from "node:test";
import { parseMilliQuantity, parseQuantity } from "../src/index.js";

test("parseMilliQuantity: Go's MilliValue, rounded up", () => {
  const cases: [string, number][] = [
    ["4", 4000],
    ["3500m", 3500],
    ["1.5", 1500],
    ["0.1", 100],
    ["2k", 2_000_000],
    ["1e3", 1_000_000],
    ["1Ki", 1_024_000],
  ];
  for (const [text, milli] of cases) assert.equal(parseMilliQuantity(text), milli, text);
});

test("parseQuantity: Go's Value (whole units, rounded up), binary and decimal suffixes", () => {
  const cases: [string, number][] = [
    ["5Mi", 5 * 2 ** 20],
    ["5M", 5_000_000],
    ["1Gi", 2 ** 30],
    ["100m", 1],
    ["1500m", 2],
    ["0", 0],
    ["2e3", 2000],
  ];
  for (const [text, value] of cases) assert.equal(parseQuantity(text), value, text);
});

test("text that is not a quantity is undefined", () => {
  for (const text of ["", "5MB", "Mi", "1.2.3", "five"]) assert.equal(parseQuantity(text), undefined, text);
  assert.equal(parseQuantity(undefined), undefined);
});
