import assert from "node:assert/strict";
import { test } from "node:test";
import { parseGoBool, parseGoBoolMap, parseGoFloat, parseGoInt } from "../../src/flags/index.js";

test("parseGoBool takes strconv.ParseBool's spellings", () => {
  for (const yes of ["1", "t", "T", "TRUE", "true", "True"]) assert.equal(parseGoBool(yes), true, yes);
  for (const no of ["0", "f", "F", "FALSE", "false", "False"]) assert.equal(parseGoBool(no), false, no);
  assert.equal(parseGoBool("yes"), undefined);
});

test("parseGoInt reads base 0", () => {
  const cases: [string, number | undefined][] = [
    ["42", 42],
    ["+7", 7],
    ["-3", -3],
    ["0x10", 16],
    ["0o17", 15],
    ["010", 8],
    ["0b101", 5],
    ["08", undefined],
    ["2.5", undefined],
    ["", undefined],
  ];
  for (const [raw, n] of cases) assert.equal(parseGoInt(raw), n, raw);
});

test("parseGoFloat and parseGoBoolMap", () => {
  assert.equal(parseGoFloat("0.5"), 0.5);
  assert.equal(parseGoFloat("1e3"), 1000);
  assert.equal(parseGoFloat("fast"), undefined);
  assert.deepEqual(parseGoBoolMap(" A = T ,B=false"), { A: true, B: false });
  assert.deepEqual(parseGoBoolMap(""), {});
  assert.equal(parseGoBoolMap("A"), 'missing "=" in "A", want key=true or key=false');
  assert.equal(parseGoBoolMap("A=maybe"), '"A=maybe" is not key=true or key=false');
});
