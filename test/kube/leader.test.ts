// Two leader-election candidates in two processes against a real kube-apiserver: one leads; kill it and the
// other takes over within the lease duration (plus the retry jitter); a graceful stop hands the lease over.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/lab/testing";

const leaseMs = 4000;
const renewMs = 3000;
const retryMs = 500;

class Candidate {
  readonly lines: string[] = [];
  readonly child: ChildProcess;
  constructor(
    kubeconfig: string,
    readonly id: string,
  ) {
    const script = join(import.meta.dirname, "fixtures", "candidate.ts");
    this.child = spawn(
      process.execPath,
      ["--import", "tsx", script, kubeconfig, id, String(leaseMs), String(renewMs), String(retryMs)],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let buffer = "";
    this.child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      this.lines.push(...parts);
    });
  }
  /** Resolves with the time the line appeared. */
  async waitFor(line: string, timeoutMs = 60_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (!this.lines.includes(line)) {
      if (Date.now() > deadline)
        throw new Error(`${this.id}: no "${line}" within ${timeoutMs} ms; saw ${JSON.stringify(this.lines)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return Date.now();
  }
  leading(): boolean {
    return this.lines.includes(`leading ${this.id}`);
  }
  async kill(signal: NodeJS.Signals): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    this.child.kill(signal);
    await exited;
  }
}

describe("leader election across processes", { skip: missingControlPlane() }, () => {
  let cp: TestControlPlane;
  const candidates: Candidate[] = [];
  before(async () => {
    cp = await startControlPlane();
  });
  after(async () => {
    for (const c of candidates) await c.kill("SIGKILL");
    await cp?.stop();
  });

  test("kill the leader: the other candidate takes over within the lease duration", async () => {
    const a = new Candidate(cp.kubeconfigPath, "a");
    candidates.push(a);
    await a.waitFor("leading a");
    const b = new Candidate(cp.kubeconfigPath, "b");
    candidates.push(b);
    await b.waitFor("leader a");
    assert.equal(b.leading(), false, "b must not lead while a renews");
    const killedAt = Date.now();
    await a.kill("SIGKILL");
    const tookOverAt = await b.waitFor("leading b");
    // b judges expiry from when it last saw the lease change, at most one renew interval before the kill;
    // then it needs one acquire attempt (retry period with client-go's jitter, up to 2.2x).
    const bound = leaseMs + 2.2 * retryMs + 1000;
    assert.ok(
      tookOverAt - killedAt <= bound,
      `takeover after ${tookOverAt - killedAt} ms, bound ${bound} ms`,
    );
  });

  test("a leader that stops gracefully releases the lease: the next one need not wait for expiry", async () => {
    const b = candidates[1];
    if (!b) throw new Error("the first test did not start b");
    assert.ok(b.leading());
    const c = new Candidate(cp.kubeconfigPath, "c");
    candidates.push(c);
    await c.waitFor("leader b");
    await b.kill("SIGTERM");
    assert.ok(b.lines.includes("stopped b"), `b did not report stopping: ${JSON.stringify(b.lines)}`);
    await c.waitFor("leading c");
  });
});
