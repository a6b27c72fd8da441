// Partial syncs over a history of changes. nftables: the state carried from sync to sync lets a
// partial sync write only the changed Services, and the table ends as a full sync of the same
// cluster leaves it. iptables: replaying the recorded lines of unchanged Services renders what
// rebuilding them renders.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { renderIPTables } from "../src/iptables/render.js";
import { FakeNFTables } from "../src/nftables/fake.js";
import { type NFTablesState, renderNFTables } from "../src/nftables/render.js";
import {
  buildMaps,
  iptOptions,
  makeService,
  makeSlice,
  NODE_NAME,
  nftOptions,
} from "../src/testing/fixtures.js";

/** One step of the cluster's history: extra endpoints for svc-1, and whether svc-2 exists. */
interface Step {
  readonly extraEndpoints: number;
  readonly withSvc2: boolean;
}

function cluster(step: Step): ReturnType<typeof buildMaps> {
  const services: Service[] = [];
  const slices: EndpointSlice[] = [];
  for (let i = 0; i < 6; i++) {
    if (i === 2 && !step.withSvc2) continue;
    const name = `svc-${i}`;
    services.push(
      makeService("ns1", name, {
        clusterIP: `172.30.0.${41 + i}`,
        type: i % 2 === 0 ? "NodePort" : "ClusterIP",
        externalTrafficPolicy: i === 4 ? "Local" : undefined,
        sessionAffinity: i % 3 === 0 ? "ClientIP" : undefined,
        ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: i % 2 === 0 ? 30080 + i : undefined }],
      }),
    );
    // svc-3 has no endpoints, so it has filter rules (REJECT) rather than nat chains.
    const count = i === 3 ? 0 : 2 + (i === 1 ? step.extraEndpoints : 0);
    // svc-0 and svc-5 share a local endpoint, so they share a hairpin element.
    const endpoints = Array.from({ length: count }, (_, e) => ({
      addresses: [i === 5 && e === 0 ? "10.180.0.1" : `10.180.${i}.${e + 1}`],
      nodeName: e === 0 ? NODE_NAME : "node2",
    }));
    slices.push(makeSlice("ns1", name, "x", endpoints, [{ name: "p80", port: 80 }]));
  }
  return buildMaps("IPv4", services, slices);
}

const history: { step: Step; changed?: string[] }[] = [
  { step: { extraEndpoints: 0, withSvc2: true } },
  { step: { extraEndpoints: 1, withSvc2: true }, changed: ["ns1/svc-1"] },
  { step: { extraEndpoints: 1, withSvc2: false }, changed: ["ns1/svc-2"] },
  // Crossing the large-cluster threshold drops per-endpoint comments from iptables rules.
  { step: { extraEndpoints: 1200, withSvc2: false }, changed: ["ns1/svc-1"] },
  { step: { extraEndpoints: 3, withSvc2: true }, changed: ["ns1/svc-1", "ns1/svc-2"] },
];

describe("partial sync replay", () => {
  test("nftables: each partial sync, carried from the last, ends where a full sync ends", () => {
    const opts = nftOptions();
    const table = new FakeNFTables("ip", "kube-proxy");
    let state: NFTablesState | undefined;
    history.forEach(({ step, changed }, i) => {
      const input = { ...cluster(step), changedServices: changed && new Set(changed), now: i * 5000 };
      const partial = renderNFTables(opts, input, state);
      assert.equal(partial.fullSync, changed === undefined, `step ${i}`);
      if (partial.cleanup) table.run(partial.cleanup);
      table.run(partial.transaction);
      // Only the changed Services are written: svc-0 never changes after the first sync.
      if (changed) assert.doesNotMatch(partial.transaction.toString(), /ns1\/svc-0/, `step ${i}`);
      // A second later a sync with nothing changed deletes the chains the changed ones left stale.
      const settled = renderNFTables(
        opts,
        { ...input, changedServices: new Set(), now: i * 5000 + 2000 },
        partial.state,
      );
      if (settled.cleanup) table.run(settled.cleanup);
      table.run(settled.transaction);
      state = settled.state;

      const full = renderNFTables(opts, { ...input, changedServices: undefined });
      const fresh = new FakeNFTables("ip", "kube-proxy");
      fresh.run(full.transaction);
      assert.equal(table.dump(), fresh.dump(), `step ${i}`);
      assert.deepEqual(state.elements, full.state.elements, `step ${i}`);
      assert.deepEqual(partial.noLocalEndpoints, full.noLocalEndpoints, `step ${i}`);
      assert.deepEqual(
        new Set(state.servicePorts.keys()),
        new Set(full.state.servicePorts.keys()),
        `step ${i}`,
      );
    });
  });

  test("nftables: a state is used up by the sync it is passed to", () => {
    const opts = nftOptions();
    const first = renderNFTables(opts, {
      ...cluster(history[0]?.step ?? { extraEndpoints: 0, withSvc2: true }),
      now: 0,
    });
    const input = {
      ...cluster({ extraEndpoints: 1, withSvc2: true }),
      changedServices: new Set(["ns1/svc-1"]),
      now: 1,
    };
    renderNFTables(opts, input, first.state);
    assert.throws(() => renderNFTables(opts, input, first.state), /already used by a later sync/);
  });

  test("iptables: replaying unchanged Services renders what rebuilding them renders", () => {
    const opts = iptOptions();
    let state: ReturnType<typeof renderIPTables>["state"] | undefined;
    history.forEach(({ step, changed }, i) => {
      const input = { ...cluster(step), changedServices: changed && new Set(changed), now: i * 600 };
      const replayed = renderIPTables(opts, input, state);
      if (state) {
        const rebuilt = renderIPTables(opts, { ...input, replay: false }, state);
        assert.equal(replayed.restore, rebuilt.restore, `step ${i}`);
        assert.deepEqual(replayed.rulesWritten, rebuilt.rulesWritten, `step ${i}`);
        assert.deepEqual(replayed.noLocalEndpoints, rebuilt.noLocalEndpoints, `step ${i}`);
      }
      state = replayed.state;
    });
  });
});
