// A hung kernel tool on the real kernel: the proxier writes with the real `nft` in a network namespace, through a
// wrapper that can be told to hang instead (a real process that never exits). The hung run is killed at the exec
// time limit, the sync fails with one line naming the tool and the limit, and the retry is a full sync that leaves
// the kernel with the current rules.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { backgroundClock } from "@switchyard/kube";
import { inNetns, newRealExec } from "../../src/apply/exec.js";
import { NftApplier } from "../../src/apply/nft-applier.js";
import { ProxyHealth } from "../../src/healthcheck/proxy-health.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { NFTablesProxyBackend } from "../../src/proxier/nftables-backend.js";
import { Proxier } from "../../src/proxier/proxier.js";
import {
  makeService,
  makeSlice,
  NODE_NAME,
  nftOptions,
  svc1,
  svc1Slice,
} from "../../src/testing/fixtures.js";
import { alive } from "../processes.js";
import { kernelTestsUnavailable } from "./topology.js";

const skip = await kernelTestsUnavailable(["nft"]);
if (skip) console.log(`# skipping the exec timeout kernel test: ${skip}`);

const LIMIT_MS = 3_000;

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("a hung nft", { skip: skip ?? false }, () => {
  const ns = `sy-exec-hang-${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), "sy-exec-hang-"));
  const hangFlag = join(dir, "hang");
  const pidFile = join(dir, "pid");
  // Named nft, so errors read as they would with the real binary; it is the real nft unless told to hang.
  const nft = join(dir, "nft");
  writeFileSync(
    nft,
    `#!/bin/sh\nif [ -e ${hangFlag} ]; then echo $$ > ${pidFile}; exec sleep 600; fi\nexec nft "$@"\n`,
  );
  chmodSync(nft, 0o755);
  after(() => {
    execFileSync("ip", ["netns", "del", ns], { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  });

  test("is killed at the limit, its sync fails with one line, and the retry is a full sync", async () => {
    execFileSync("ip", ["netns", "add", ns]);
    const errors: string[] = [];
    const logger = {
      info() {},
      warn() {},
      error(msg: string, fields?: Record<string, unknown>) {
        errors.push(`${msg}: ${(fields?.error as Error | undefined)?.message}`);
      },
    };
    const metrics = newProxyMetrics("nftables");
    const health = new ProxyHealth({ clock: backgroundClock, healthTimeoutMs: 60_000 });
    const exec = inNetns(ns, newRealExec({ timeoutMs: LIMIT_MS }));
    const proxier = new Proxier({
      nodeName: NODE_NAME,
      backend: new NFTablesProxyBackend({
        options: nftOptions(),
        nft: new NftApplier({ exec, nft }),
        metrics,
        logger,
      }),
      metrics,
      health,
      minSyncPeriodMs: 0,
      syncPeriodMs: 200,
      logger,
    });
    const svc = svc1;
    const slice = svc1Slice;
    const table = () =>
      execFileSync("ip", ["netns", "exec", ns, "nft", "list", "table", "ip", "kube-proxy"], {
        encoding: "utf8",
      });
    try {
      proxier.onServiceUpdate(undefined, svc);
      proxier.onEndpointSliceUpdate(slice(["10.180.0.1"]), false);
      proxier.start();
      await until("the first sync", () => proxier.syncs.ok === 1);
      assert.deepEqual(proxier.syncs, { ok: 1, failed: 0, full: 1 });
      assert.match(table(), /10\.180\.0\.1/);

      writeFileSync(hangFlag, "");
      proxier.onEndpointSliceUpdate(slice(["10.180.0.1", "10.180.0.2"]), false);
      await until("the hung sync to fail", () => proxier.syncs.failed === 1);
      const pid = Number(readFileSync(pidFile, "utf8"));
      assert.deepEqual(errors, [
        `sync failed, retrying with a full sync: ${nft}: still running after 3s, killed (exec timeout)`,
      ]);
      await until("the hung nft to be gone", () => !alive(pid), 5_000);

      rmSync(hangFlag);
      await until("the retry", () => proxier.syncs.ok === 2);
      assert.deepEqual(proxier.syncs, { ok: 2, failed: 1, full: 2 }, "the retry was a full sync");
      assert.match(table(), /10\.180\.0\.2/);
    } finally {
      rmSync(hangFlag, { force: true });
      await proxier.stop();
    }
  });
});
