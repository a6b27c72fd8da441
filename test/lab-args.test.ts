// What `npm run lab ARGS` hands the lab's CLI (scripts/lab-args.mjs): a command as given, anything else after `up`.
// The CLI's side (a typo refused with a suggestion, `up down` refused) is lab/test/cli/process.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { labCommandLine } from "../scripts/lab-args.mjs";

test("`npm run lab down` runs down, a typo reaches the CLI as given, flags alone go to up", () => {
  assert.deepEqual(labCommandLine(["down"]), ["down"]);
  assert.deepEqual(labCommandLine(["dwn"]), ["dwn"]);
  assert.deepEqual(labCommandLine([]), ["up"]);
  assert.deepEqual(labCommandLine(["--nodes", "5"]), ["up", "--nodes", "5"]);
});
