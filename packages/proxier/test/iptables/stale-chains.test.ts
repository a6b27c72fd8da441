import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ServicePortRecord } from "../../src/iptables/service-record.js";
import { staleChains } from "../../src/iptables/stale-chains.js";

const record = (...chains: string[]): ServicePortRecord => ({
  noLocalInternal: false,
  noLocalExternal: false,
  filterLines: [],
  topNatLines: [],
  chains,
});

describe("staleChains", () => {
  test("first sync: chains of an earlier run that no port owns, ignoring other chains", () => {
    const now = new Map([["a", record("KUBE-SVC-A", "KUBE-SEP-A1")]]);
    const existing = ["KUBE-SVC-A", "KUBE-SEP-A1", "KUBE-SEP-OLD", "OTHER"];
    assert.deepEqual(staleChains(now, undefined, existing), ["KUBE-SEP-OLD"]);
  });

  test("replayed records cost nothing; changed and removed ports give up what they lost", () => {
    const kept = record("KUBE-SVC-K", "KUBE-SEP-K1");
    const before = new Map([
      ["k", kept],
      ["c", record("KUBE-SVC-C", "KUBE-SEP-C1", "KUBE-SEP-C2")],
      ["gone", record("KUBE-SVC-G", "KUBE-SEP-G1")],
    ]);
    const now = new Map([
      ["k", kept],
      ["c", record("KUBE-SVC-C", "KUBE-SEP-C2", "KUBE-SEP-C3")],
    ]);
    assert.deepEqual(staleChains(now, { servicePorts: before, leftoverChains: [] }, undefined), [
      "KUBE-SEP-C1",
      "KUBE-SEP-G1",
      "KUBE-SVC-G",
    ]);
  });

  test("a put-off chain stays stale until a port owns it again", () => {
    const before = new Map([["c", record("KUBE-SVC-C", "KUBE-SEP-C2")]]);
    const history = { servicePorts: before, leftoverChains: ["KUBE-SEP-C1"] };
    assert.deepEqual(staleChains(before, history, undefined), ["KUBE-SEP-C1"]);
    const back = new Map([["c", record("KUBE-SVC-C", "KUBE-SEP-C1", "KUBE-SEP-C2")]]);
    assert.deepEqual(staleChains(back, history, undefined), []);
  });
});
