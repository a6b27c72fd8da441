// Which lab folder a command acts on, and what `up` tells a lab outside the default folder: SWITCHYARD_LAB_DIR is
// read by every command (not only kubectl), so the one export the summary prints is enough for all of them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { currentLabDir, defaultLabDir, labDirHint } from "../../src/netns/state.js";

const home = { HOME: "/home/u" };

test("no SWITCHYARD_LAB_DIR: the default folder, and no hint for a lab in it", () => {
  assert.equal(defaultLabDir(home), "/home/u/.local/state/switchyard/lab");
  assert.equal(currentLabDir(home), "/home/u/.local/state/switchyard/lab");
  assert.deepEqual(labDirHint("/home/u/.local/state/switchyard/lab", home), []);
});

test("a lab elsewhere: the summary says which variable to export; once exported, no hint", () => {
  assert.deepEqual(labDirHint("/tmp/lab2", home), [
    "this lab is in /tmp/lab2; for the commands below: export SWITCHYARD_LAB_DIR=/tmp/lab2",
  ]);
  const exported = { ...home, SWITCHYARD_LAB_DIR: "/tmp/lab2" };
  assert.equal(currentLabDir(exported), "/tmp/lab2");
  assert.deepEqual(labDirHint("/tmp/lab2", exported), []);
});
