import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { didYouMean, editDistance, suggestionsFor } from "../../src/flags/index.js";

describe("suggestions (cobra's rule: at most two edits, or a prefix)", () => {
  test("edit distance counts insertions, deletions and substitutions, ignoring case", () => {
    assert.equal(editDistance("down", "down"), 0);
    assert.equal(editDistance("dwn", "down"), 1);
    assert.equal(editDistance("Down", "down"), 0);
    assert.equal(editDistance("stauts", "status"), 2);
    assert.equal(editDistance("", "up"), 2);
    assert.equal(editDistance("kitten", "sitting"), 3);
  });

  test("close names and names starting with what was typed, closest first", () => {
    const names = ["up", "down", "status", "controlplane", "conformance", "completion"];
    assert.deepEqual(suggestionsFor("dwn", names), ["down"]);
    assert.deepEqual(suggestionsFor("con", names), ["conformance", "controlplane", "down"]);
    assert.deepEqual(suggestionsFor("controlplan", names), ["controlplane"]);
    assert.deepEqual(suggestionsFor("xyzzy", names), []);
    assert.deepEqual(suggestionsFor("up", names), [], "an exact name is no suggestion");
  });

  test("the phrase names up to three", () => {
    assert.equal(didYouMean([]), "");
    assert.equal(didYouMean(["a"]), '; did you mean "a"?');
    assert.equal(didYouMean(["a", "b", "c", "d"]), '; did you mean "a", "b" or "c"?');
    assert.equal(
      didYouMean(["x"], (s) => `--${s}`),
      "; did you mean --x?",
    );
  });
});
