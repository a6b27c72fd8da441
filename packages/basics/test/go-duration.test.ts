import assert from "node:assert/strict";
import { test } from "node:test";
import { formatGoDuration, goDurationError, parseGoDuration } from "../src/index.js";

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

test("Go's duration text in the resolver's range errors", () => {
  assert.deepEqual([0, 500, 1500, 120_000, 90_000_000, -5000, 0.5].map(formatGoDuration), [
    "0s",
    "500ms",
    "1.5s",
    "2m0s",
    "25h0m0s",
    "-5s",
    "500µs",
  ]);
});

test("below a millisecond Go picks µs, then ns (time.Duration.String's small units)", () => {
  // Go: fmt.Println(1500*time.Nanosecond, 500*time.Nanosecond, 999999*time.Nanosecond, time.Nanosecond)
  const cases: [number, string][] = [
    [0.0015, "1.5µs"],
    [0.0005, "500ns"],
    [0.000001, "1ns"],
    [0.999999, "999.999µs"],
    [0.001, "1µs"],
    [1.0005, "1.0005ms"],
    [-0.25, "-250µs"],
    [61_000.000001, "1m1.000000001s"],
    // Sums of decimal fractions land on whole nanoseconds, as Go holds them.
    [0.1 + 0.2, "300µs"],
  ];
  for (const [ms, text] of cases) assert.equal(formatGoDuration(ms), text, `${ms} ms`);
});

test("parseGoDuration takes what time.ParseDuration takes", () => {
  assert.equal(parseGoDuration("300ms"), 300);
  assert.equal(parseGoDuration("1.5h"), 5_400_000);
  assert.equal(parseGoDuration("2h45m"), 9_900_000);
  assert.equal(parseGoDuration(".5s"), 500);
  assert.equal(parseGoDuration("1.s"), 1000);
  assert.equal(parseGoDuration("0"), 0);
  assert.equal(parseGoDuration("+5s"), 5000);
  assert.equal(parseGoDuration("-1s"), -1000);
  assert.equal(parseGoDuration("1500us"), 1.5);
  assert.equal(parseGoDuration("1500µs"), 1.5);
  assert.equal(parseGoDuration("1500μs"), 1.5);
  assert.equal(parseGoDuration("2000000ns"), 2);
  for (const bad of ["5", "", "s", ".s", "1x", "1s2", "--1s", "9999999999h"])
    assert.equal(parseGoDuration(bad), undefined, bad);
});

test("goDurationError words the first problem as Go does", () => {
  assert.equal(goDurationError("x"), 'time: invalid duration "x"');
  assert.equal(goDurationError(""), 'time: invalid duration ""');
  assert.equal(goDurationError("1"), 'time: missing unit in duration "1"');
  assert.equal(goDurationError("1d"), 'time: unknown unit "d" in duration "1d"');
  assert.equal(goDurationError("-5s1"), 'time: missing unit in duration "-5s1"');
  assert.equal(goDurationError("9999999999h"), 'time: invalid duration "9999999999h"');
});
