// The host Exec's time limit on real child processes, timed by a fake clock: a run past the limit is killed with
// everything it started and fails with one line naming the program and the limit.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { FakeClock } from "@switchyard/kube/testing";
import {
  type Exec,
  ExecTimeoutError,
  inNetns,
  isRealExec,
  newRealExec,
  realExec,
} from "../../src/apply/exec.js";
import { alive } from "../processes.js";

const dir = mkdtempSync(join(tmpdir(), "sy-exec-timeout-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Waits (a bounded while) for a pid to go; the kernel reaps a killed process asynchronously. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 250 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
  return !alive(pid);
}

/** Polls for the pid a script wrote, so the test knows the program is running before it moves the clock. */
async function pidIn(file: string): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const text = (() => {
      try {
        return readFileSync(file, "utf8").trim();
      } catch {
        return "";
      }
    })();
    if (/^\d+$/.test(text)) return Number(text);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no pid in ${file}`);
}

describe("newRealExec's time limit", () => {
  test("a program past its limit is killed, with what it started, and fails with one line", async () => {
    const clock = new FakeClock();
    const exec = newRealExec({ timeoutMs: 5_000, clock });
    const pids = join(dir, "tree");
    // A child in the background too: it holds the pipes open, as a tool's helper process could.
    const run = exec("sh", ["-c", `sleep 600 & echo $! > ${pids}.bg; echo $$ > ${pids}; wait`]);
    let settled = false;
    run.then(
      () => (settled = true),
      () => (settled = true),
    );
    const pid = await pidIn(pids);
    const background = await pidIn(`${pids}.bg`);
    await clock.advance(4_999);
    assert.equal(settled, false, "inside the limit");
    await clock.advance(1);
    await assert.rejects(run, (err: Error) => {
      assert.ok(err instanceof ExecTimeoutError);
      assert.equal(err.message, "sh: still running after 5s, killed (exec timeout)");
      return true;
    });
    assert.ok(await gone(pid), "the program was killed");
    assert.ok(await gone(background), "and what it started");
  });

  test("a program that ends in time answers as before and leaves no timer", async () => {
    const clock = new FakeClock();
    const exec = newRealExec({ timeoutMs: 5_000, clock });
    const r = await exec("sh", ["-c", "cat; echo oops >&2; exit 3"], { stdin: ["a", Buffer.from("b")] });
    assert.deepEqual(r, { code: 3, stdout: "ab", stderr: "oops\n" });
    assert.equal(clock.pendingTimers(), 0);
    await assert.rejects(exec("sy-no-such-tool", []), /sy-no-such-tool: command not found/);
  });

  test("the limit of 0 is none; only execs made here count as real", async () => {
    const clock = new FakeClock();
    const exec = newRealExec({ timeoutMs: 0, clock });
    assert.equal((await exec("true", [])).code, 0);
    assert.equal(clock.pendingTimers(), 0);
    assert.ok(isRealExec(exec) && isRealExec(realExec));
    assert.equal(
      isRealExec(async () => ({ code: 0, stdout: "", stderr: "" })),
      false,
    );
  });

  test("in a network namespace the error names the program run there, not ip", async () => {
    const hung: Exec = async () => {
      throw new ExecTimeoutError("ip", 60_000);
    };
    await assert.rejects(
      inNetns("sy-ns", hung)("iptables-restore", ["-w", "5"]),
      /^ExecTimeoutError: iptables-restore: still running after 1m0s, killed \(exec timeout\)$/,
    );
  });
});
