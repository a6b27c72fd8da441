// One reconcile round end to end on a scripted conntrack: what it lists, what it deletes, what
// it records in the two conntrack_reconciler metrics and what it logs.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import type { Exec } from "../../src/apply/exec.js";
import { cleanStaleEntries } from "../../src/conntrack/clean-stale.js";
import { ConntrackCLI } from "../../src/conntrack/conntrack.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import type { ProxierLogger } from "../../src/proxier/backend.js";
import { buildMaps, makeService, makeSlice, NODE_NAME } from "../../src/testing/fixtures.js";
import { fakeExec } from "../apply/fake-exec.js";

const entry = (sport: number, endpoint: string, dst = "172.30.0.10") =>
  `udp      17 29 src=10.180.0.99 dst=${dst} sport=${sport} dport=53 src=${endpoint} dst=10.180.0.99 sport=53 dport=${sport} [ASSURED] mark=0 use=1`;

/** A UDP DNS Service served by 10.180.0.2 only. */
const maps = buildMaps(
  "IPv4",
  [
    makeService("ns1", "dns", {
      clusterIP: "172.30.0.10",
      ports: [{ name: "dns", port: 53, protocol: "UDP" }],
    }),
  ],
  [
    makeSlice(
      "ns1",
      "dns",
      "a",
      [{ addresses: ["10.180.0.2"] }],
      [{ name: "dns", port: 53, protocol: "UDP" }],
    ),
  ],
);

function logger() {
  const lines: string[] = [];
  const log: ProxierLogger = {
    info: () => {},
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
  };
  return { log, lines };
}

async function round(exec: Exec, family: IPFamily = "IPv4") {
  const metrics = newProxyMetrics("nftables");
  const { log, lines } = logger();
  let t = 5000;
  // Each clock read moves 3 ms on, so the round's duration is the 3 ms between its two reads.
  const clock = { now: () => (t += 3) };
  const { deleted, expiring } = await cleanStaleEntries({
    table: new ConntrackCLI(exec),
    family,
    ...maps,
    metrics,
    clock,
    logger: log,
  });
  return { deleted, expiring, lines, text: await metrics.registry.metrics() };
}

describe("cleanStaleEntries", () => {
  test("lists once, deletes each stale entry by its tuples, and counts them per family", async () => {
    const listing = [
      entry(40001, "10.180.0.1"), // the old endpoint: stale
      entry(40002, "10.180.0.2"), // the serving one: kept
      entry(40003, "10.180.0.3"), // stale
      entry(40004, "10.180.0.1", "172.30.0.99"), // not a service IP: not ours
    ].join("\n");
    const { exec, calls } = fakeExec((c) =>
      c.args.includes("-L")
        ? {
            stdout: `${listing}\n`,
            stderr: "conntrack v1.4.7 (conntrack-tools): 4 flow entries have been shown.\n",
          }
        : { stderr: "conntrack v1.4.7 (conntrack-tools): 1 flow entries have been deleted.\n" },
    );
    const r = await round(exec);
    assert.equal(r.deleted, 2);
    // One listing, then one delete per stale endpoint of the service port (here one entry each).
    assert.deepEqual(
      calls.map((c) =>
        c.args.includes("-D") ? `-D ${c.args[c.args.indexOf("--reply-src") + 1]}` : c.args.join(" "),
      ),
      ["-L -p udp", "-D 10.180.0.1", "-D 10.180.0.3"],
    );
    assert.match(r.text, /^kubeproxy_conntrack_reconciler_deleted_entries_total\{ip_family="IPv4"\} 2$/m);
    assert.match(
      r.text,
      /^kubeproxy_conntrack_reconciler_sync_duration_seconds_count\{ip_family="IPv4"\} 1$/m,
    );
    assert.match(
      r.text,
      /^kubeproxy_conntrack_reconciler_sync_duration_seconds_sum\{ip_family="IPv4"\} 0.003$/m,
    );
    assert.deepEqual(r.lines, []);
  });

  test("nothing stale: no delete runs, the round is still recorded with 0 deleted", async () => {
    const { exec, calls } = fakeExec(() => ({ stdout: `${entry(40002, "10.180.0.2")}\n` }));
    const r = await round(exec, "IPv6");
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.args, ["-f", "ipv6", "-L", "-p", "udp"]);
    assert.match(r.text, /^kubeproxy_conntrack_reconciler_deleted_entries_total\{ip_family="IPv6"\} 0$/m);
    assert.match(
      r.text,
      /^kubeproxy_conntrack_reconciler_sync_duration_seconds_count\{ip_family="IPv6"\} 1$/m,
    );
  });

  test("a failed listing is logged and records nothing, as upstream returns before its metrics", async () => {
    const { exec } = fakeExec(() => ({
      code: 1,
      stderr: "conntrack v1.4.7 (conntrack-tools): Operation failed: Operation not permitted\n",
    }));
    const r = await round(exec);
    assert.equal(r.deleted, 0);
    assert.deepEqual(r.lines, ["error failed to list conntrack entries"]);
    assert.doesNotMatch(r.text, /^kubeproxy_conntrack_reconciler_\w+\{/m);
  });

  test("failed deletes are logged; the ones that worked are counted", async () => {
    const listing = [entry(40001, "10.180.0.1"), entry(40003, "10.180.0.3")].join("\n");
    const { exec } = fakeExec((c) =>
      c.args.includes("-L")
        ? { stdout: listing }
        : c.args.includes("10.180.0.1")
          ? { stderr: "conntrack v1.4.7 (conntrack-tools): 1 flow entries have been deleted.\n" }
          : { code: 1, stderr: "conntrack v1.4.7 (conntrack-tools): Operation failed: Permission denied\n" },
    );
    const r = await round(exec);
    assert.equal(r.deleted, 1);
    assert.deepEqual(r.lines, ["warn deleting a stale conntrack entry failed"]);
    assert.match(r.text, /^kubeproxy_conntrack_reconciler_deleted_entries_total\{ip_family="IPv4"\} 1$/m);
  });

  test("answered entries to a terminating endpoint the rules left are set to expire, not deleted nor counted", async () => {
    const terminating = buildMaps(
      "IPv4",
      [
        makeService("ns1", "dns", {
          clusterIP: "172.30.0.10",
          ports: [{ name: "dns", port: 53, protocol: "UDP" }],
        }),
      ],
      [
        makeSlice(
          "ns1",
          "dns",
          "a",
          [
            { addresses: ["10.180.0.2"] },
            { addresses: ["10.180.0.4"], conditions: { ready: false, serving: true, terminating: true } },
          ],
          [{ name: "dns", port: 53, protocol: "UDP" }],
        ),
      ],
    );
    const listing = [entry(40001, "10.180.0.4"), entry(40002, "10.180.0.1")].join("\n");
    const { exec, calls } = fakeExec((c) =>
      c.args.includes("-L")
        ? { stdout: `${listing}\n` }
        : {
            stderr: `conntrack v1.4.7 (conntrack-tools): 1 flow entries have been ${c.args.includes("-U") ? "updated" : "deleted"}.\n`,
          },
    );
    const metrics = newProxyMetrics("nftables");
    const r = await cleanStaleEntries({
      table: new ConntrackCLI(exec),
      family: "IPv4",
      ...terminating,
      metrics,
      clock: { now: () => 0 },
      logger: logger().log,
      drainTerminatingOn: NODE_NAME,
    });
    assert.deepEqual(r, { deleted: 1, expiring: 1, drained: 1 });
    const ops = calls.slice(1).map((c) => `${c.args[0]} ${c.args[c.args.indexOf("--reply-src") + 1]}`);
    assert.deepEqual(ops, ["-D 10.180.0.1", "-U 10.180.0.4"]);
    assert.deepEqual(calls[2]?.args.slice(-2), ["--timeout", "1"]);
    assert.ok(!calls[2]?.args.includes("--status"), "no --status: -U would set it, not match it");
    const text = await metrics.registry.metrics();
    assert.match(text, /^kubeproxy_conntrack_reconciler_deleted_entries_total\{ip_family="IPv4"\} 1$/m);
  });
});
