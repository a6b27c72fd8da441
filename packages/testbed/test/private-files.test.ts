import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { ensurePrivateDir, restrictFile, writePrivateFile } from "../src/private-files.js";

const mode = (path: string) => statSync(path).mode & 0o777;

describe("private files: state folders 0700, secrets 0600", () => {
  const root = mkdtempSync(join(tmpdir(), "sy-private-"));
  after(() => rmSync(root, { recursive: true, force: true }));

  test("a new state folder and its missing parents are made 0700", () => {
    const dir = join(root, "new", "state");
    ensurePrivateDir(dir);
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(join(root, "new")), 0o700);
  });

  test("an existing 0755 folder is tightened to 0700; a stricter one is left as it is", () => {
    const loose = join(root, "loose");
    mkdirSync(loose);
    chmodSync(loose, 0o755);
    ensurePrivateDir(loose);
    assert.equal(mode(loose), 0o700);
    const strict = join(root, "strict");
    mkdirSync(strict, { mode: 0o500 });
    ensurePrivateDir(strict);
    assert.equal(mode(strict), 0o500);
    chmodSync(strict, 0o700);
  });

  test("a secret is written 0600, and an existing 0644 one is tightened before it is overwritten", () => {
    const fresh = join(root, "token");
    writePrivateFile(fresh, "one");
    assert.equal(mode(fresh), 0o600);
    const old = join(root, "old-token");
    writeFileSync(old, "before", { mode: 0o644 });
    chmodSync(old, 0o644);
    writePrivateFile(old, "after");
    assert.equal(mode(old), 0o600);
    assert.equal(readFileSync(old, "utf8"), "after");
  });

  test("restrictFile tightens a key another program wrote, and passes over a missing one", () => {
    const key = join(root, "a.key");
    writeFileSync(key, "k");
    chmodSync(key, 0o664);
    restrictFile(key);
    assert.equal(mode(key), 0o600);
    restrictFile(join(root, "missing.key"));
  });
});
