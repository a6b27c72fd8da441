import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { EndpointInfo } from "../../src/model/endpoint.js";
import type { ServicePortInfo } from "../../src/model/service-port.js";
import { categorizeEndpoints } from "../../src/model/topology.js";
import { svc } from "../../src/testing/fixtures.js";

function ep(ip: string, o: Partial<EndpointInfo> = {}): EndpointInfo {
  return {
    ip,
    port: 80,
    ready: true,
    serving: true,
    terminating: false,
    nodeName: "",
    zone: "",
    isLocal: false,
    zoneHints: [],
    nodeHints: [],
    ...o,
  };
}

const ips = (eps: readonly EndpointInfo[] | undefined) => eps?.map((e) => e.ip).sort();
const labels = { "topology.kubernetes.io/zone": "zone-a" };

// `undefined` for a list means "that policy is not used"; [] means "used, none available".
const cases: {
  name: string;
  svc: ServicePortInfo;
  eps: EndpointInfo[];
  cluster: string[] | undefined;
  local: string[] | undefined;
  all: string[];
  any: boolean;
}[] = [
  { name: "no endpoints", svc: svc(), eps: [], cluster: undefined, local: undefined, all: [], any: false },
  {
    name: "all ready, no hints",
    svc: svc(),
    eps: [ep("10.180.0.1"), ep("10.180.0.2")],
    cluster: ["10.180.0.1", "10.180.0.2"],
    local: undefined,
    all: ["10.180.0.1", "10.180.0.2"],
    any: true,
  },
  {
    name: "zone hints for this zone",
    svc: svc(),
    eps: [ep("10.180.0.1", { zoneHints: ["zone-a"] }), ep("10.180.0.2", { zoneHints: ["zone-b"] })],
    cluster: ["10.180.0.1"],
    local: undefined,
    all: ["10.180.0.1"],
    any: true,
  },
  {
    name: "zone hints ignored when one ready endpoint lacks one",
    svc: svc(),
    eps: [ep("10.180.0.1", { zoneHints: ["zone-a"] }), ep("10.180.0.2")],
    cluster: ["10.180.0.1", "10.180.0.2"],
    local: undefined,
    all: ["10.180.0.1", "10.180.0.2"],
    any: true,
  },
  {
    name: "zone hints ignored when none is for this zone",
    svc: svc(),
    eps: [ep("10.180.0.1", { zoneHints: ["zone-b"] }), ep("10.180.0.2", { zoneHints: ["zone-c"] })],
    cluster: ["10.180.0.1", "10.180.0.2"],
    local: undefined,
    all: ["10.180.0.1", "10.180.0.2"],
    any: true,
  },
  {
    name: "node hints win over zone hints",
    svc: svc(),
    eps: [
      ep("10.180.0.1", { zoneHints: ["zone-a"], nodeHints: ["node1"] }),
      ep("10.180.0.2", { zoneHints: ["zone-a"], nodeHints: ["node2"] }),
    ],
    cluster: ["10.180.0.1"],
    local: undefined,
    all: ["10.180.0.1"],
    any: true,
  },
  {
    name: "node hints for another node fall back to zone hints",
    svc: svc(),
    eps: [
      ep("10.180.0.1", { zoneHints: ["zone-a"], nodeHints: ["node3"] }),
      ep("10.180.0.2", { zoneHints: ["zone-b"], nodeHints: ["node2"] }),
    ],
    cluster: ["10.180.0.1"],
    local: undefined,
    all: ["10.180.0.1"],
    any: true,
  },
  {
    name: "only serving-terminating endpoints",
    svc: svc(),
    eps: [
      ep("10.180.0.1", { ready: false, serving: true, terminating: true }),
      ep("10.180.0.2", { ready: false, serving: false, terminating: true }),
    ],
    cluster: ["10.180.0.1"],
    local: undefined,
    all: ["10.180.0.1"],
    any: true,
  },
  {
    name: "not ready and not serving counts as none",
    svc: svc(),
    eps: [ep("10.180.0.1", { ready: false, serving: false })],
    cluster: [],
    local: undefined,
    all: [],
    any: false,
  },
  {
    name: "ITP Local picks local ready endpoints",
    svc: svc({ internalPolicyLocal: true }),
    eps: [ep("10.180.0.1", { isLocal: true }), ep("10.180.0.2")],
    cluster: undefined,
    local: ["10.180.0.1"],
    all: ["10.180.0.1"],
    any: true,
  },
  {
    name: "ITP Local with no local endpoint still reports endpoints elsewhere",
    svc: svc({ internalPolicyLocal: true }),
    eps: [ep("10.180.0.2")],
    cluster: undefined,
    local: undefined,
    all: [],
    any: true,
  },
  {
    name: "ETP Local uses both lists; hints do not narrow Local",
    svc: svc({ externalPolicyLocal: true, nodePort: 30080 }),
    eps: [
      ep("10.180.0.1", { isLocal: true, zoneHints: ["zone-b"] }),
      ep("10.180.0.2", { zoneHints: ["zone-a"] }),
    ],
    cluster: ["10.180.0.2"],
    local: ["10.180.0.1"],
    all: ["10.180.0.1", "10.180.0.2"],
    any: true,
  },
  {
    name: "ETP Local falls back to local serving-terminating",
    svc: svc({ externalPolicyLocal: true, nodePort: 30080 }),
    eps: [
      ep("10.180.0.1", { isLocal: true, ready: false, serving: true, terminating: true }),
      ep("10.180.0.2"),
    ],
    cluster: ["10.180.0.2"],
    local: ["10.180.0.1"],
    all: ["10.180.0.1", "10.180.0.2"],
    any: true,
  },
  {
    name: "ITP and ETP Local on a NodePort still computes Cluster endpoints for short-circuiting",
    svc: svc({ internalPolicyLocal: true, externalPolicyLocal: true, nodePort: 30080 }),
    eps: [ep("10.180.0.1", { isLocal: true }), ep("10.180.0.2")],
    cluster: ["10.180.0.1", "10.180.0.2"],
    local: ["10.180.0.1"],
    all: ["10.180.0.1", "10.180.0.2"],
    any: true,
  },
];

describe("categorizeEndpoints", () => {
  for (const c of cases) {
    test(c.name, () => {
      const frozen = Object.freeze(c.eps.map((e) => Object.freeze(e)));
      const r = categorizeEndpoints(frozen, c.svc, "node1", labels);
      assert.deepEqual(ips(r.clusterEndpoints), c.cluster);
      assert.deepEqual(ips(r.localEndpoints), c.local);
      assert.deepEqual(ips(r.allReachableEndpoints), c.all);
      assert.equal(r.hasAnyEndpoints, c.any);
    });
  }
});
