// Every kubeproxy_* metric /metrics serves, per mode, against kube-proxy v1.37.2's as its source declares them
// (upstream-metrics.ts, written by reading pkg/proxy/metrics/metrics.go): the same families in each mode, each
// with upstream's HELP line (stability level included) and TYPE. One row per metric and mode.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Nfacct } from "@switchyard/proxier";
import { newAppMetrics } from "../src/metrics.js";
import { expositionLines, familyLines, type Mode, UPSTREAM_METRICS } from "./upstream-metrics.js";

/** A kernel whose two objects both exist, so the nfacct metrics have a sample like the others. */
const nfacct: Nfacct = {
  ensure: async () => {},
  get: async (name) => ({ name, packets: 1, bytes: 60 }),
};
const quiet = { info() {}, warn() {}, error() {} };

for (const mode of ["iptables", "nftables", "ipvs"] as const satisfies readonly Mode[]) {
  describe(`${mode} mode's kubeproxy_* metrics against upstream's`, async () => {
    const ours = familyLines(await newAppMetrics(mode, nfacct, quiet).registry.metrics());
    const theirs = UPSTREAM_METRICS.filter((m) => m.modes.includes(mode));

    for (const m of theirs)
      test(`kubeproxy_${m.name}`, () => {
        assert.deepEqual(ours.get(`kubeproxy_${m.name}`), expositionLines(m));
      });

    test("no kubeproxy_* family upstream does not have in this mode", () => {
      const known = new Set(theirs.map((m) => `kubeproxy_${m.name}`));
      assert.deepEqual(
        [...ours.keys()].filter((name) => !known.has(name)),
        [],
      );
    });
  });
}

test("without nfacct, iptables mode has no nfacct metric, as upstream when its collector cannot start", async () => {
  const ours = familyLines(await newAppMetrics("iptables", undefined, quiet).registry.metrics());
  for (const m of UPSTREAM_METRICS.filter((m) => m.needsNfacct))
    assert.equal(ours.get(`kubeproxy_${m.name}`), undefined, m.name);
});
