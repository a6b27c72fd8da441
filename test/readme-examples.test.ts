// How a README's code blocks are read for the packaging test: which run, with what output, and which marks are wrong.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readmeExamples } from "./readme-examples.js";

const fence = "```";

test("a block marked runs is taken with the output block after it", () => {
  const md = [
    "# x",
    `${fence}ts runs`,
    'console.log("hi");',
    fence,
    "",
    "prints:",
    "",
    `${fence}text output`,
    "hi",
    fence,
  ].join("\n");
  assert.deepEqual(readmeExamples(md, "R.md"), {
    runnable: [{ where: "R.md:2", code: 'console.log("hi");\n', expected: "hi" }],
    notRun: [],
    errors: [],
  });
});

test("not-run needs a reason; an unmarked ts or sh block and a stray output block are errors", () => {
  const md = [
    `${fence}ts not-run: needs root`,
    "x",
    fence,
    `${fence}sh`,
    "ls",
    fence,
    `${fence}ts not-run:`,
    "y",
    fence,
    `${fence}text output`,
    "z",
    fence,
    `${fence}ts runs`,
    "w",
    fence,
    `${fence}text`,
    "w",
    fence,
    fence,
    ".:53 {",
    fence,
  ].join("\n");
  const r = readmeExamples(md, "R.md");
  assert.deepEqual(r.notRun, ["R.md:1: needs root"]);
  assert.deepEqual(r.runnable, []);
  assert.deepEqual(r.errors, [
    "R.md:4: say `sh runs` or `sh not-run: <reason>`",
    "R.md:7: say `ts runs` or `ts not-run: <reason>`",
    "R.md:10: an output block with no block marked runs before it",
    "R.md:13: a block marked runs must be followed by a ```text output block",
  ]);
});
