import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { withLabLock } from "../src/lock.js";

describe("withLabLock", () => {
  test("the lock names its holder while the command runs and is gone after it", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "sy-lock-")), "lab");
    let release: () => void = () => {};
    const first = withLabLock(dir, "up", () => new Promise<string>((r) => (release = () => r("done"))));
    await new Promise((r) => setImmediate(r));
    const holder = JSON.parse(readFileSync(`${dir}.lock`, "utf8")) as { pid: number; command: string };
    assert.deepEqual(holder, { pid: process.pid, command: "up" });
    release();
    assert.equal(await first, "done");
    assert.equal(existsSync(`${dir}.lock`), false);
  });

  test("a live holder makes the other command fail with one line naming it", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "sy-lock-")), "lab");
    const child = spawn("sleep", ["30"]);
    try {
      writeFileSync(`${dir}.lock`, JSON.stringify({ pid: child.pid, command: "up" }));
      let ran = false;
      await assert.rejects(
        withLabLock(dir, "down", async () => {
          ran = true;
        }),
        new RegExp(
          `^Error: another switchyard-lab up \\(pid ${child.pid}\\) is working on ${dir}; wait for it to finish$`,
        ),
      );
      assert.equal(ran, false);
      assert.equal(existsSync(`${dir}.lock`), true, "the holder's lock stays");
    } finally {
      child.kill();
    }
  });

  test("a lock left by a process that is gone is taken over", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "sy-lock-")), "lab");
    const child = spawn("true");
    await new Promise((r) => child.on("exit", r));
    writeFileSync(`${dir}.lock`, JSON.stringify({ pid: child.pid, command: "up" }));
    assert.equal(await withLabLock(dir, "down", async () => "ran"), "ran");
    assert.equal(existsSync(`${dir}.lock`), false);
  });

  test("the lock is released when the command fails", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "sy-lock-")), "lab");
    await assert.rejects(
      withLabLock(dir, "up", async () => Promise.reject(new Error("boom"))),
      /boom/,
    );
    assert.equal(existsSync(`${dir}.lock`), false);
  });
});
