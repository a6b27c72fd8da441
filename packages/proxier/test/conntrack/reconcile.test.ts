// Which listed conntrack entries the reconciler deletes. The scenarios follow upstream's
// pkg/proxy/conntrack/cleanup_test.go (v1.37.2): a Service with a TCP, a UDP and an SCTP port
// on the same number, one serving and one non-serving endpoint, and entries DNATed to
// those, to a deleted endpoint, to an endpoint's old port, or not DNATed at all.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ConntrackFlow } from "../../src/conntrack/flow.js";
import { drainedConntrackFlows, expirableFlows, staleConntrackFlows } from "../../src/conntrack/reconcile.js";
import { buildMaps, makeService, makeSlice, NODE_NAME } from "../../src/testing/fixtures.js";

const CLUSTER_IP = "172.30.1.1";
const EXTERNAL_IP = "192.168.99.100";
const LB_IP = "1.2.3.4";
const NODE_IP = "192.168.0.2";
const SERVING = "10.240.0.4";
const NOT_SERVING = "10.240.1.5";
const DELETED = "10.240.2.6";
const OLD_ENDPOINT_PORT = 8080;
const ENDPOINT_PORT = 9090;
const SERVICE_PORT = 8000;
const NODE_PORT = 32000;
/** A port no Service uses: entries to it are not kube-proxy's. */
const OTHER_PORT = 3000;
const CLIENT = "10.0.0.99";
const CLIENT_PORT = 40000;

/** An entry from CLIENT to origDst:origPort that replySrc:replyPort answers. */
function flow(
  protocol: string,
  origDst: string,
  origPort: number,
  replySrc: string,
  replyPort: number,
): ConntrackFlow {
  return {
    protocol,
    orig: { src: CLIENT, dst: origDst, sport: CLIENT_PORT, dport: origPort },
    reply: { src: replySrc, dst: CLIENT, sport: replyPort, dport: CLIENT_PORT },
  };
}

type Case = readonly [name: string, entry: ConntrackFlow, stale: boolean];

type Protocol = "TCP" | "UDP" | "SCTP";

function maps(
  serviceName: string,
  withNodePort = true,
  protocols: readonly Protocol[] = ["TCP", "UDP", "SCTP"],
) {
  const ports = protocols.map((protocol) => ({
    name: `test-${protocol.toLowerCase()}`,
    port: SERVICE_PORT,
    protocol,
    ...(withNodePort && protocol !== "TCP" ? { nodePort: NODE_PORT } : {}),
  }));
  const svc = makeService(
    "test",
    "cleanup-test",
    { type: "LoadBalancer", clusterIP: CLUSTER_IP, externalIPs: [EXTERNAL_IP], ports },
    { loadBalancer: { ingress: [{ ip: LB_IP }] } },
  );
  const slice = makeSlice(
    "test",
    serviceName,
    "0",
    [
      { addresses: [SERVING], conditions: { serving: true } },
      { addresses: [NOT_SERVING], conditions: { serving: false } },
    ],
    ports.map((p) => ({ name: p.name, port: ENDPOINT_PORT, protocol: p.protocol })),
  );
  return buildMaps("IPv4", [svc], [slice]);
}

function check(cases: readonly Case[], m: ReturnType<typeof maps>) {
  const got = new Set(
    staleConntrackFlows(
      cases.map(([, e]) => e),
      m.services,
      m.endpoints,
    ),
  );
  for (const [name, entry, stale] of cases) {
    assert.equal(got.has(entry), stale, `${name}: expected ${stale ? "deleted" : "kept"}`);
  }
  assert.equal(got.size, cases.filter(([, , stale]) => stale).length);
}

const FRONTENDS = [CLUSTER_IP, LB_IP, EXTERNAL_IP];

describe("staleConntrackFlows (upstream's cleanup_test.go scenarios)", () => {
  test("a service with serving, non-serving and deleted endpoints", () => {
    const cases: Case[] = [];
    // The endpoint kept its IP but moved to another port: the old flows are stale.
    for (const ip of FRONTENDS) {
      cases.push([
        `udp ${ip} -> serving IP, old port`,
        flow("udp", ip, SERVICE_PORT, SERVING, OLD_ENDPOINT_PORT),
        true,
      ]);
    }
    for (const dnat of [SERVING, NOT_SERVING, DELETED]) {
      for (const proto of ["tcp", "udp", "sctp"]) {
        for (const ip of FRONTENDS) {
          for (const port of [SERVICE_PORT, OTHER_PORT]) {
            const stale = proto === "udp" && port === SERVICE_PORT && dnat !== SERVING;
            cases.push([
              `${proto} ${ip}:${port} -> ${dnat}`,
              flow(proto, ip, port, dnat, ENDPOINT_PORT),
              stale,
            ]);
          }
        }
        // NodePort entries match on the port only, whatever node address the client used.
        const stale = proto === "udp" && dnat !== SERVING;
        cases.push([
          `${proto} *:${NODE_PORT} -> ${dnat}`,
          flow(proto, NODE_IP, NODE_PORT, dnat, ENDPOINT_PORT),
          stale,
        ]);
      }
    }
    // Not DNATed (a proxy without reject rules would leave these): the reply comes from the
    // service IP itself, which is no endpoint, so the service port's entries go.
    for (const ip of FRONTENDS) {
      for (const port of [SERVICE_PORT, OTHER_PORT]) {
        cases.push([`udp ${ip}:${port} not DNATed`, flow("udp", ip, port, ip, port), port === SERVICE_PORT]);
      }
    }
    assert.equal(cases.length, 3 + 63 + 6);
    check(cases, maps("cleanup-test"));
  });

  test("a service without endpoints: every UDP entry to its IPs goes, NodePort entries stay", () => {
    // The slice belongs to another Service, so this one has no endpoints at all.
    const m = maps("non-existing-service", true, ["UDP"]);
    const cases: Case[] = [];
    for (const ip of FRONTENDS) {
      for (const dnat of [SERVING, DELETED]) {
        cases.push([`udp ${ip} -> ${dnat}`, flow("udp", ip, SERVICE_PORT, dnat, ENDPOINT_PORT), true]);
      }
    }
    cases.push([
      "udp to a port no service uses",
      flow("udp", EXTERNAL_IP, OTHER_PORT, DELETED, ENDPOINT_PORT),
      false,
    ]);
    cases.push([
      "tcp to the service port",
      flow("tcp", EXTERNAL_IP, SERVICE_PORT, DELETED, ENDPOINT_PORT),
      false,
    ]);
    // With no serving endpoint every UDP flow to that port number would match, kube-proxy's
    // or not, so upstream leaves NodePort entries alone in this case.
    cases.push(["udp *:NodePort", flow("udp", NODE_IP, NODE_PORT, DELETED, ENDPOINT_PORT), false]);
    check(cases, m);
  });

  test("a served service IP:port is still stale on a UDP NodePort number that it is not served by", () => {
    // Upstream checks both maps in turn: a ClusterIP on port 32000 and another Service's
    // NodePort 32000 are separate frontends with separate endpoint sets.
    const m = maps("cleanup-test", true, ["UDP"]);
    const other = buildMaps(
      "IPv4",
      [
        makeService("test", "other", {
          clusterIP: "172.30.1.2",
          ports: [{ port: NODE_PORT, protocol: "UDP" }],
        }),
      ],
      [makeSlice("test", "other", "0", [{ addresses: ["10.240.3.7"] }], [{ port: 53, protocol: "UDP" }])],
    );
    const services = new Map([...m.services, ...other.services]);
    const endpoints = new Map([...m.endpoints, ...other.endpoints]);
    const entry = flow("udp", "172.30.1.2", NODE_PORT, "10.240.3.7", 53);
    assert.deepEqual(staleConntrackFlows([entry], services, endpoints), [entry]);
  });

  test("IPv6 service IPs and endpoints", () => {
    const svc = makeService("ns1", "dns", {
      clusterIP: "fd00:172:30::10",
      clusterIPs: ["fd00:172:30::10"],
      ipFamilies: ["IPv6"],
      ports: [{ name: "dns", port: 53, protocol: "UDP" }],
    });
    const slice = makeSlice(
      "ns1",
      "dns",
      "a",
      [{ addresses: ["fd00:10:180::1"] }],
      [{ name: "dns", port: 53, protocol: "UDP" }],
      "IPv6",
    );
    const m = buildMaps("IPv6", [svc], [slice]);
    const served = flow("udp", "fd00:172:30::10", 53, "fd00:10:180::1", 53);
    const stale = flow("udp", "fd00:172:30::10", 53, "fd00:10:180::2", 53);
    assert.deepEqual(staleConntrackFlows([served, stale], m.services, m.endpoints), [stale]);
  });

  test("nothing listed, or no UDP services: nothing to delete", () => {
    const m = maps("cleanup-test", true, ["TCP"]);
    assert.deepEqual(staleConntrackFlows([], m.services, m.endpoints), []);
    const entry = flow("udp", CLUSTER_IP, SERVICE_PORT, DELETED, ENDPOINT_PORT);
    assert.deepEqual(staleConntrackFlows([entry], m.services, m.endpoints), []);
  });

  test("a million entries take one pass", () => {
    // Upstream's performance test: one stale and one live entry among a million to the
    // external IP on random ports; only the ones on the service port are stale.
    const m = maps("cleanup-test", false, ["UDP"]);
    const entries = [
      flow("udp", EXTERNAL_IP, SERVICE_PORT, SERVING, ENDPOINT_PORT),
      flow("udp", EXTERNAL_IP, SERVICE_PORT, DELETED, ENDPOINT_PORT),
    ];
    let expected = 1;
    for (let i = 0; i < 1_000_000; i++) {
      const port = (i * 7919) % 65535;
      if (port === SERVICE_PORT) expected++;
      entries.push(flow("udp", EXTERNAL_IP, port, DELETED, ENDPOINT_PORT));
    }
    assert.equal(staleConntrackFlows(entries, m.services, m.endpoints).length, expected);
  });
});

describe("drainedConntrackFlows: answered flows to a terminating endpoint the rules left", () => {
  const READY = "10.240.0.7";
  const TERMINATING = "10.240.0.8";
  const terminating = { ready: false, serving: true, terminating: true };
  /** A UDP ClusterIP Service port (with a NodePort) over these endpoints; `local` names the endpoints on this node. */
  function udpMaps(eps: { ip: string; conditions?: object; local?: boolean }[], policy?: "Local") {
    const svc = makeService("test", "dns", {
      type: "NodePort",
      clusterIP: CLUSTER_IP,
      ...(policy ? { internalTrafficPolicy: policy } : {}),
      ports: [{ name: "dns", port: SERVICE_PORT, protocol: "UDP", nodePort: NODE_PORT }],
    });
    const slice = makeSlice(
      "test",
      "dns",
      "0",
      eps.map((e) => ({
        addresses: [e.ip],
        nodeName: e.local ? NODE_NAME : "node2",
        ...(e.conditions ? { conditions: e.conditions } : {}),
      })),
      [{ name: "dns", port: ENDPOINT_PORT, protocol: "UDP" }],
    );
    return buildMaps("IPv4", [svc], [slice]);
  }
  const drained = (m: ReturnType<typeof udpMaps>, entries: ConntrackFlow[]) =>
    drainedConntrackFlows(entries, m.services, m.endpoints, NODE_NAME);
  const none = { answered: [], waiting: [] };

  test("with a ready endpoint beside it, a terminating one's answered flows go, by ClusterIP and by NodePort", () => {
    const m = udpMaps([{ ip: READY }, { ip: TERMINATING, conditions: terminating }]);
    const viaClusterIP = flow("udp", CLUSTER_IP, SERVICE_PORT, TERMINATING, ENDPOINT_PORT);
    const viaNodePort = flow("udp", NODE_IP, NODE_PORT, TERMINATING, ENDPOINT_PORT);
    const waiting = { ...viaClusterIP, orig: { ...viaClusterIP.orig, sport: 40001 }, unreplied: true };
    const toReady = flow("udp", CLUSTER_IP, SERVICE_PORT, READY, ENDPOINT_PORT);
    const tcp = flow("tcp", CLUSTER_IP, SERVICE_PORT, TERMINATING, ENDPOINT_PORT);
    // The one still waiting for its reply is left to get it, and returned apart so the caller looks again.
    assert.deepEqual(drained(m, [viaClusterIP, viaNodePort, waiting, toReady, tcp]), {
      answered: [viaClusterIP, viaNodePort],
      waiting: [waiting],
    });
    // Upstream's rule keeps every one of them: the terminating endpoint still serves.
    assert.deepEqual(
      staleConntrackFlows([viaClusterIP, viaNodePort, waiting, toReady], m.services, m.endpoints),
      [],
    );
  });

  test("an endpoint with an entry still waiting for its reply is not shortened yet; the others are", () => {
    const viaClusterIP = flow("udp", CLUSTER_IP, SERVICE_PORT, TERMINATING, ENDPOINT_PORT);
    const waiting = { ...viaClusterIP, orig: { ...viaClusterIP.orig, sport: 40001 }, unreplied: true };
    const viaNodePort = flow("udp", NODE_IP, NODE_PORT, TERMINATING, ENDPOINT_PORT);
    const other = flow("udp", CLUSTER_IP, SERVICE_PORT, READY, ENDPOINT_PORT);
    // The ClusterIP group of the endpoint has a query out: one -U for it would shorten that entry too.
    assert.deepEqual(expirableFlows({ answered: [viaClusterIP, viaNodePort, other], waiting: [waiting] }), [
      viaNodePort,
      other,
    ]);
    assert.deepEqual(expirableFlows({ answered: [viaClusterIP], waiting: [] }), [viaClusterIP]);
  });

  test("when nothing is ready the rules fall back to terminating endpoints, and their flows stay", () => {
    const m = udpMaps([{ ip: TERMINATING, conditions: terminating }]);
    assert.deepEqual(drained(m, [flow("udp", CLUSTER_IP, SERVICE_PORT, TERMINATING, ENDPOINT_PORT)]), none);
  });

  test("internalTrafficPolicy Local: a local terminating endpoint is this node's fallback while no local one is ready", () => {
    const entry = flow("udp", CLUSTER_IP, SERVICE_PORT, TERMINATING, ENDPOINT_PORT);
    const elsewhereReady = udpMaps(
      [{ ip: READY }, { ip: TERMINATING, conditions: terminating, local: true }],
      "Local",
    );
    assert.deepEqual(drained(elsewhereReady, [entry]), none);
    const localReady = udpMaps(
      [
        { ip: READY, local: true },
        { ip: TERMINATING, conditions: terminating, local: true },
      ],
      "Local",
    );
    assert.deepEqual(drained(localReady, [entry]), { answered: [entry], waiting: [] });
  });
});
