// Partial syncs replay what unchanged Services wrote last time instead of rebuilding them.
// Each case renders the same partial sync twice, once with the recorded Services and once
// with the records dropped (every Service rebuilt), and requires identical output.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { renderIPTables } from "../src/iptables/render.js";
import { renderNFTables } from "../src/nftables/render.js";
import { buildMaps, iptOptions, makeService, makeSlice, NODE_NAME, nftOptions } from "./fixtures.js";

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
  test("nftables: replaying unchanged Services renders what rebuilding them renders", () => {
    const opts = nftOptions();
    let state: ReturnType<typeof renderNFTables>["state"] | undefined;
    history.forEach(({ step, changed }, i) => {
      const input = { ...cluster(step), changedServices: changed && new Set(changed), now: i * 600 };
      const replayed = renderNFTables(opts, input, state);
      if (state) {
        const rebuilt = renderNFTables(opts, input, { ...state, servicePorts: new Map() });
        assert.equal(replayed.transaction.toString(), rebuilt.transaction.toString(), `step ${i}`);
        assert.equal(replayed.cleanup?.toString(), rebuilt.cleanup?.toString(), `step ${i}`);
        assert.deepEqual(replayed.state.elements, rebuilt.state.elements, `step ${i}`);
        assert.deepEqual(replayed.noLocalEndpoints, rebuilt.noLocalEndpoints, `step ${i}`);
      }
      state = replayed.state;
    });
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
