// The NAT hooks' nftables table, against a scripted nft: what start-up sends, and what removal makes of each answer
// (the real kernel's side is in test/kernel/ebpf-tc-loader.test.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ensureNatHooks, NAT_HOOKS_TABLE, removeNatHooks } from "../../src/apply/bpf-tc-nat-hooks.js";
import { fakeExec } from "./fake-exec.js";

describe("the tc program's NAT hooks table", () => {
  test("start-up sends one nft transaction: a nat chain at postrouting whose one rule counts translated flows", async () => {
    const { exec, calls } = fakeExec();
    await ensureNatHooks(exec);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.args, ["-f", "-"]);
    assert.match(String(calls[0]?.stdin), /type nat hook postrouting priority srcnat; policy accept;/);
    assert.match(
      String(calls[0]?.stdin),
      new RegExp(`add rule inet ${NAT_HOOKS_TABLE} nat-postrouting ct status dnat counter\n`),
    );
  });

  test("start-up fails with nft's words when nft refuses", async () => {
    const { exec } = fakeExec(() => ({
      code: 1,
      stderr: "Error: Could not process rule: Operation not supported",
    }));
    await assert.rejects(
      ensureNatHooks(exec),
      /cannot turn the kernel's NAT hooks on \(nft\): Error: Could not process/,
    );
  });

  test("removal: true when the table went, false when there was none or no nft at all, an error otherwise", async () => {
    assert.equal(await removeNatHooks(fakeExec().exec), true);
    const none = fakeExec(() => ({
      code: 1,
      stderr: "Error: Could not process rule: No such file or directory",
    }));
    assert.equal(await removeNatHooks(none.exec), false);
    assert.equal(await removeNatHooks(fakeExec(() => "missing").exec), false);
    const busy = fakeExec(() => ({
      code: 1,
      stderr: "Error: Could not process rule: Device or resource busy",
    }));
    await assert.rejects(removeNatHooks(busy.exec), /Device or resource busy/);
  });
});
