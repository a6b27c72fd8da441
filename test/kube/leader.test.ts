// Two leader-election candidates in two processes against a real kube-apiserver: one leads; kill it and the
// other takes over within the lease duration (plus the retry jitter); a graceful stop hands the lease over; a leader
// whose path to the apiserver is blackholed stops leading before the lease can expire for the other.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import { BlackholeProxy } from "./fixtures/blackhole-proxy.js";
import { Candidate } from "./fixtures/candidate-process.js";

const timings = { leaseMs: 4000, renewMs: 3000, retryMs: 500 };
const { leaseMs, retryMs } = timings;

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
    const a = new Candidate(cp.kubeconfigPath, "a", timings);
    candidates.push(a);
    await a.waitFor("leading a");
    const b = new Candidate(cp.kubeconfigPath, "b", timings);
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
    const c = new Candidate(cp.kubeconfigPath, "c", timings);
    candidates.push(c);
    await c.waitFor("leader b");
    await b.kill("SIGTERM");
    assert.ok(b.lines.includes("stopped b"), `b did not report stopping: ${JSON.stringify(b.lines)}`);
    await c.waitFor("leading c");
  });

  test("a leader cut off from the apiserver stops leading before the standby can take over", async (t) => {
    const proxy = await BlackholeProxy.start(cp.server);
    const dir = mkdtempSync(join(tmpdir(), "sy-leader-blackhole-"));
    const viaProxy = join(dir, "kubeconfig");
    writeFileSync(viaProxy, readFileSync(cp.kubeconfigPath, "utf8").replaceAll(cp.server, proxy.url));
    const cut = { leaseMs: 6000, renewMs: 3000, retryMs: 500, lease: "switchyard-blackhole-test" };
    try {
      const leader = new Candidate(viaProxy, "cut-off", cut);
      candidates.push(leader);
      await leader.waitFor("leading cut-off");
      const standby = new Candidate(cp.kubeconfigPath, "standby", cut);
      candidates.push(standby);
      await standby.waitFor("leader cut-off");
      // Packets dropped both ways, connections left open: the leader's reads and writes get no answer at all.
      const cutAt = Date.now();
      proxy.blackhole();
      const stoppedAt = await leader.waitFor("stopped cut-off");
      const tookOverAt = await standby.waitFor("leading standby");
      t.diagnostic(
        `leader stopped ${stoppedAt - cutAt} ms after the cut, standby led after ${tookOverAt - cutAt} ms`,
      );
      // Two leaders never act at once: the standby cannot take the lease before the lease duration has passed
      // since it last saw a renewal, and that renewal was at most a retry period (plus its request) before the cut.
      assert.ok(
        stoppedAt < tookOverAt,
        `leader stopped at +${stoppedAt - cutAt} ms, standby led at +${tookOverAt - cutAt} ms`,
      );
      assert.ok(
        stoppedAt - cutAt < cut.leaseMs - cut.retryMs,
        `leader stopped ${stoppedAt - cutAt} ms after the cut; renew deadline ${cut.renewMs} ms, retry ${cut.retryMs} ms`,
      );
    } finally {
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
