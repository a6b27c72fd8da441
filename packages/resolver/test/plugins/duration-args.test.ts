// Duration arguments of cache, forward and kubernetes: Go's time.ParseDuration, as CoreDNS reads them, never negative.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseDuration } from "../../src/plugin/pkg/duration.js";

test("what Go's time.ParseDuration takes is read in milliseconds", () => {
  assert.equal(parseDuration("5s"), 5000);
  assert.equal(parseDuration("1m30s"), 90_000);
  assert.equal(parseDuration("250ms"), 250);
  assert.equal(parseDuration("0"), 0);
  assert.equal(parseDuration(".5s"), 500);
  assert.equal(parseDuration("1500us"), 1.5);
});

test("text Go refuses, and a negative duration, are not durations", () => {
  for (const text of ["", "5", "5x", "s", "-1s", "1d", "9999999999h"]) {
    assert.equal(parseDuration(text), undefined, text);
  }
});
