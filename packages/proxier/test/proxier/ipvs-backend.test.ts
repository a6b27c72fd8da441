// The Proxier on the IPVS backend, with the real IPVSApplier and IptablesRestoreApplier
// running against a fake kernel (FakeIPVS, FakeIPSet, FakeIPTables, kube-ipvs0's addresses):
// a full sync, then diffs; a failure makes the next sync full and re-reads the kernel.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FakeClock } from "@switchyard/kube/testing";
import { IptablesRestoreApplier } from "../../src/apply/iptables-restore.js";
import { IPVSApplier } from "../../src/apply/ipvs-applier.js";
import { ProxyHealth } from "../../src/healthcheck/proxy-health.js";
import { traceIPVSPacket } from "../../src/ipvs/tracer.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { IPVSProxyBackend } from "../../src/proxier/ipvs-backend.js";
import { Proxier } from "../../src/proxier/proxier.js";
import { makeService, makeSlice, NODE_IP, NODE_NAME, svc1, svc1Slice } from "../../src/testing/fixtures.js";
import { FakeKernelExec } from "../ipvs/fake-kernel-exec.js";
import { ipvsOptions } from "../ipvs/helpers.js";

const SYNC_PERIOD = 30_000;

function setup() {
  const time = new FakeClock(1_000_000);
  const kernel = new FakeKernelExec();
  const metrics = newProxyMetrics("ipvs");
  const health = new ProxyHealth({ clock: time, healthTimeoutMs: 2 * SYNC_PERIOD });
  const backend = new IPVSProxyBackend({
    options: ipvsOptions(),
    ipvs: new IPVSApplier({ exec: kernel.exec, exists: () => true }),
    ipt: new IptablesRestoreApplier({ family: "IPv4", exec: kernel.exec }),
    metrics,
  });
  const proxier = new Proxier({
    nodeName: NODE_NAME,
    backend,
    metrics,
    health,
    minSyncPeriodMs: 1000,
    syncPeriodMs: SYNC_PERIOD,
    clock: time,
  });
  const trace = (destIP = "172.30.0.41") =>
    traceIPVSPacket(
      {
        iptables: kernel.iptables,
        ipset: kernel.ipset,
        ipvs: kernel.ipvs,
        localIPs: [NODE_IP, ...kernel.bound],
      },
      { sourceIP: "10.180.0.99", destIP, destPort: 80, protocol: "tcp" },
    );
  // The appliers await many exec calls: more than FakeClock.advance settles, so let a
  // macrotask pass too (the fake kernel answers without I/O, so that finishes the sync).
  const step = async (ms: number) => {
    await time.advance(ms);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { time, step, kernel, metrics, proxier, trace };
}

const svc = svc1;
const slice = svc1Slice;
const ipvsPrograms = (k: FakeKernelExec) => k.callsOf("ipvsadm", "-R").map((c) => c.stdin ?? "");
const ipsetPrograms = (k: FakeKernelExec) => k.callsOf("ipset", "restore").map((c) => c.stdin ?? "");

test("a full sync, then one endpoint removed: one ipvsadm delete, an ipset diff, the VIP stays bound", async () => {
  const t = setup();
  t.proxier.onServiceUpdate(undefined, svc);
  t.proxier.onEndpointSliceUpdate(slice(["10.180.0.1", "10.180.0.2"]), false);
  t.proxier.start();
  await t.step(0);
  assert.deepEqual(t.proxier.syncs, { ok: 1, failed: 0, full: 1 });
  assert.ok(t.kernel.dummy, "kube-ipvs0 was created");
  assert.deepEqual(
    t.kernel.callsOf("ip", "addr").map((c) => c.args.join(" ")),
    ["addr add 172.30.0.41/32 dev kube-ipvs0"],
  );
  assert.equal(
    t.kernel.ipvs.dump(),
    [
      "Prot LocalAddress:Port Scheduler Flags",
      "  -> RemoteAddress:Port Forward Weight",
      "TCP 172.30.0.41:80 rr",
      "  -> 10.180.0.1:80 Masq 1",
      "  -> 10.180.0.2:80 Masq 1",
      "",
    ].join("\n"),
  );
  assert.match(ipsetPrograms(t.kernel)[0] ?? "", /^flush KUBE-CLUSTER-IP$/m, "a full sync writes whole sets");
  assert.deepEqual(t.kernel.ipset.members("KUBE-CLUSTER-IP"), ["172.30.0.41,tcp:80"]);
  assert.equal(t.trace().output, "10.180.0.1:80, 10.180.0.2:80");

  t.proxier.onEndpointSliceUpdate(slice(["10.180.0.1"]), false);
  await t.step(1000);
  assert.deepEqual(t.proxier.syncs, { ok: 2, failed: 0, full: 1 });
  const program = ipvsPrograms(t.kernel).at(-1) ?? "";
  assert.equal(program, "-d -t 172.30.0.41:80 -r 10.180.0.2:80\n", "exactly one delete");
  const ipset = ipsetPrograms(t.kernel).at(-1) ?? "";
  assert.doesNotMatch(ipset, /^(flush|add) /m, "a partial sync sends only the changed members");
  assert.match(ipset, /^del KUBE-LOOP-BACK 10\.180\.0\.2,tcp:80,10\.180\.0\.2$/m);
  assert.deepEqual(t.kernel.ipset.members("KUBE-LOOP-BACK"), ["10.180.0.1,tcp:80,10.180.0.1"]);
  assert.deepEqual([...t.kernel.bound], ["172.30.0.41"]);
  assert.equal(t.kernel.callsOf("ip", "addr").length, 1, "the VIP was not bound again");
  assert.equal(t.trace().output, "10.180.0.1:80");
  await t.proxier.stop();
});

test("a busy real server drains at weight 0 and goes once idle; a deleted Service is unbound", async () => {
  const t = setup();
  t.proxier.onServiceUpdate(undefined, svc);
  t.proxier.onEndpointSliceUpdate(slice(["10.180.0.1", "10.180.0.2"]), false);
  t.proxier.start();
  await t.step(0);
  t.kernel.busy.add("TCP 172.30.0.41:80/10.180.0.2:80");
  t.proxier.onEndpointSliceUpdate(slice(["10.180.0.1"]), false);
  await t.step(1000);
  assert.equal(ipvsPrograms(t.kernel).at(-1), "-e -t 172.30.0.41:80 -r 10.180.0.2:80 -m -w 0\n");
  t.kernel.busy.clear();
  t.proxier.onServiceUpdate(svc, undefined);
  await t.step(1000);
  assert.equal(ipvsPrograms(t.kernel).at(-1), "-D -t 172.30.0.41:80\n");
  assert.deepEqual([...t.kernel.bound], []);
  assert.equal(
    t.kernel.callsOf("ip", "addr").at(-1)?.args.join(" "),
    "addr del 172.30.0.41/32 dev kube-ipvs0",
  );
  await t.proxier.stop();
});

test("a failed sync is retried in full: it re-reads the kernel and rewrites every set", async () => {
  const t = setup();
  t.proxier.onServiceUpdate(undefined, svc);
  t.proxier.onEndpointSliceUpdate(slice(["10.180.0.1"]), false);
  t.proxier.start();
  await t.step(0);

  t.kernel.failures.set("iptables-restore", 1);
  t.proxier.onEndpointSliceUpdate(slice(["10.180.0.3"]), false);
  await t.step(1000);
  assert.equal(t.proxier.syncs.failed, 1);
  const failures = await t.metrics.registry.getSingleMetricAsString(
    "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
  );
  assert.match(failures, /ip_family="IPv4"} 1/);
  // Someone deleted a virtual server meanwhile; the full retry must notice.
  t.kernel.ipvs.restore("-D -t 172.30.0.41:80\n");
  const listsBefore = t.kernel.callsOf("ipvsadm", "-Ln").length;
  await t.step(SYNC_PERIOD);
  assert.deepEqual(t.proxier.syncs, { ok: 2, failed: 1, full: 2 }, "the retry is a full sync");
  assert.equal(t.kernel.callsOf("ipvsadm", "-Ln").length, listsBefore + 1);
  assert.match(ipsetPrograms(t.kernel).at(-1) ?? "", /^flush KUBE-LOOP-BACK$/m);
  assert.equal(t.trace().output, "10.180.0.3:80");
  // Upstream's IPVS mode counts no iptables rules (RegisterMetrics registers only the restore failures).
  assert.equal(t.metrics.registry.getSingleMetric("kubeproxy_sync_proxy_rules_iptables_total"), undefined);
  await t.proxier.stop();
});
