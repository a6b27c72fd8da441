// Golden tests: the three programs an IPVS sync produces for small clusters. Expected text
// is written from kube-proxy's ipvs proxier (no IP_VS here to capture it from a node).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderIPVS } from "../../src/ipvs/render.js";
import { buildMaps, makeService, makeSlice } from "../../src/testing/fixtures.js";
import { dedent } from "../nft-helpers.js";
import { ipvsOptions } from "./helpers.js";

const p80 = [{ name: "p80", port: 80 }];
const tcp80 = [{ name: "p80", port: 80, protocol: "TCP" as const }];

/** `add` lines of an ipset program, grouped as "SET member". */
function members(program: string): string[] {
  return program
    .split("\n")
    .filter((l) => l.startsWith("add "))
    .map((l) => l.slice(4));
}

function vsLines(full: string): string[] {
  return full.split("\n").filter((l) => l !== "" && l !== "-C");
}

describe("ipvs golden", () => {
  test("ClusterIP with two endpoints, and one without endpoints: full programs", () => {
    const maps = buildMaps(
      "IPv4",
      [
        makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80 }),
        makeService("ns6", "svc6", { clusterIP: "172.30.0.46", ports: tcp80 }),
      ],
      [makeSlice("ns1", "svc1", "a", [{ addresses: ["10.180.0.1"] }, { addresses: ["10.180.0.2"] }], p80)],
    );
    const r = renderIPVS(ipvsOptions(), maps);
    assert.equal(
      r.ipvsadmFull,
      dedent(`
        -C
        -A -t 172.30.0.41:80 -s rr
        -a -t 172.30.0.41:80 -r 10.180.0.1:80 -m -w 1
        -a -t 172.30.0.41:80 -r 10.180.0.2:80 -m -w 1
        -A -t 172.30.0.46:80 -s rr
      `),
    );
    assert.deepEqual(members(r.ipsetFull), [
      "KUBE-CLUSTER-IP 172.30.0.41,tcp:80",
      "KUBE-CLUSTER-IP 172.30.0.46,tcp:80",
      "KUBE-IPVS-IPS 172.30.0.41",
      "KUBE-IPVS-IPS 172.30.0.46",
    ]);
    assert.deepEqual(r.bind.addresses, ["172.30.0.41", "172.30.0.46"]);
    assert.equal(
      r.iptablesRestore,
      dedent(`
        *nat
        :KUBE-SERVICES - [0:0]
        :KUBE-POSTROUTING - [0:0]
        :KUBE-NODE-PORT - [0:0]
        :KUBE-LOAD-BALANCER - [0:0]
        :KUBE-MARK-MASQ - [0:0]
        -A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN
        -A KUBE-SERVICES -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
        -A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT
        -A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ
        -A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT
        -A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN
        -A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000
        -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
        -A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000
        COMMIT
        *filter
        :KUBE-FORWARD - [0:0]
        :KUBE-NODE-PORT - [0:0]
        :KUBE-PROXY-FIREWALL - [0:0]
        :KUBE-SOURCE-RANGES-FIREWALL - [0:0]
        :KUBE-IPVS-FILTER - [0:0]
        :KUBE-IPVS-OUT-FILTER - [0:0]
        -A KUBE-SOURCE-RANGES-FIREWALL -j DROP
        -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00004000/0x00004000 -j ACCEPT
        -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
        -A KUBE-NODE-PORT -m comment --comment "Kubernetes health check node port" -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j ACCEPT
        -A KUBE-IPVS-FILTER -m set --match-set KUBE-LOAD-BALANCER dst,dst -j RETURN
        -A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN
        -A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP dst,dst -j RETURN
        -A KUBE-IPVS-FILTER -m set --match-set KUBE-EXTERNAL-IP-LOCAL dst,dst -j RETURN
        -A KUBE-IPVS-FILTER -m set --match-set KUBE-HEALTH-CHECK-NODE-PORT dst -j RETURN
        -A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT
        COMMIT
      `),
    );
  });

  test("NodePort: one virtual server per node address (never loopback), masquerade set, external IP", () => {
    const maps = buildMaps(
      "IPv4",
      [
        makeService("ns2", "svc2", {
          type: "NodePort",
          clusterIP: "172.30.0.42",
          externalIPs: ["192.168.99.11", "192.168.0.2"],
          ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
        }),
        makeService("ns3", "svc3", {
          type: "NodePort",
          clusterIP: "172.30.0.43",
          ports: [{ name: "s", port: 9, protocol: "SCTP", nodePort: 3003 }],
        }),
      ],
      [makeSlice("ns2", "svc2", "a", [{ addresses: ["10.180.0.3"], nodeName: "node1" }], p80)],
    );
    const opts = ipvsOptions("IPv4", { nodeAddresses: ["192.168.0.2", "10.0.0.5", "127.0.0.1"] });
    const r = renderIPVS(opts, maps);
    assert.deepEqual(vsLines(r.ipvsadmFull), [
      "-A --sctp-service 10.0.0.5:3003 -s rr",
      "-A --sctp-service 172.30.0.43:9 -s rr",
      "-A --sctp-service 192.168.0.2:3003 -s rr",
      "-A -t 10.0.0.5:3001 -s rr",
      "-a -t 10.0.0.5:3001 -r 10.180.0.3:80 -m -w 1",
      "-A -t 172.30.0.42:80 -s rr",
      "-a -t 172.30.0.42:80 -r 10.180.0.3:80 -m -w 1",
      "-A -t 192.168.0.2:3001 -s rr",
      "-a -t 192.168.0.2:3001 -r 10.180.0.3:80 -m -w 1",
      "-A -t 192.168.0.2:80 -s rr",
      "-a -t 192.168.0.2:80 -r 10.180.0.3:80 -m -w 1",
      "-A -t 192.168.99.11:80 -s rr",
      "-a -t 192.168.99.11:80 -r 10.180.0.3:80 -m -w 1",
    ]);
    // The external IP the node owns already is not bound to kube-ipvs0.
    assert.deepEqual(r.bind.addresses, ["172.30.0.42", "172.30.0.43", "192.168.99.11"]);
    assert.deepEqual(members(r.ipsetFull), [
      "KUBE-LOOP-BACK 10.180.0.3,tcp:80,10.180.0.3",
      "KUBE-CLUSTER-IP 172.30.0.42,tcp:80",
      "KUBE-CLUSTER-IP 172.30.0.43,sctp:9",
      "KUBE-EXTERNAL-IP 192.168.0.2,tcp:80",
      "KUBE-EXTERNAL-IP 192.168.99.11,tcp:80",
      "KUBE-NODE-PORT-TCP 3001",
      "KUBE-NODE-PORT-SCTP-HASH 10.0.0.5,sctp:3003",
      "KUBE-NODE-PORT-SCTP-HASH 192.168.0.2,sctp:3003",
      "KUBE-IPVS-IPS 172.30.0.42",
      "KUBE-IPVS-IPS 172.30.0.43",
      "KUBE-IPVS-IPS 192.168.99.11",
    ]);
    const nat = r.iptablesRestore
      .split("\n")
      .filter((l) => /^-A (KUBE-NODE-PORT -p|KUBE-SERVICES .*KUBE-EXTERNAL-IP )/.test(l));
    assert.deepEqual(nat, [
      '-A KUBE-NODE-PORT -p tcp -m comment --comment "Kubernetes nodeport TCP port for masquerade purpose" -m set --match-set KUBE-NODE-PORT-TCP dst -j KUBE-MARK-MASQ',
      "-A KUBE-NODE-PORT -p sctp -m comment --comment \"Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'\" -m set --match-set KUBE-NODE-PORT-SCTP-HASH dst,dst -j KUBE-MARK-MASQ",
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -j KUBE-MARK-MASQ',
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT',
      '-A KUBE-SERVICES -m comment --comment "Kubernetes service external ip + port for masquerade and filter purpose" -m set --match-set KUBE-EXTERNAL-IP dst,dst -m addrtype --dst-type LOCAL -j ACCEPT',
    ]);
  });

  test("ClientIP affinity sets persistence; the scheduler option and mh's flag reach every server", () => {
    const maps = buildMaps(
      "IPv4",
      [
        makeService("ns1", "svc1", { clusterIP: "172.30.0.41", sessionAffinity: "ClientIP", ports: tcp80 }),
        makeService("ns2", "svc2", {
          clusterIP: "172.30.0.42",
          sessionAffinity: "ClientIP",
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
          ports: tcp80,
        }),
      ],
      [],
    );
    assert.deepEqual(vsLines(renderIPVS(ipvsOptions(), maps).ipvsadmFull), [
      "-A -t 172.30.0.41:80 -s rr -p 10800",
      "-A -t 172.30.0.42:80 -s rr -p 60",
    ]);
    assert.deepEqual(vsLines(renderIPVS(ipvsOptions("IPv4", { scheduler: "mh" }), maps).ipvsadmFull), [
      "-A -t 172.30.0.41:80 -s mh -p 10800 -b mh-port",
      "-A -t 172.30.0.42:80 -s mh -p 60 -b mh-port",
    ]);
  });

  test("externalTrafficPolicy Local: local endpoints outside, all inside; cluster fallback without local ones", () => {
    const lb = (name: string, ip: string, vip: string, nodePort: number) =>
      makeService(
        "ns",
        name,
        {
          type: "LoadBalancer",
          clusterIP: ip,
          externalTrafficPolicy: "Local",
          healthCheckNodePort: nodePort + 1000,
          ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort }],
        },
        { loadBalancer: { ingress: [{ ip: vip }] } },
      );
    const maps = buildMaps(
      "IPv4",
      [lb("local", "172.30.0.44", "1.2.3.4", 3004), lb("remote", "172.30.0.45", "5.6.7.8", 3005)],
      [
        makeSlice(
          "ns",
          "local",
          "a",
          [
            { addresses: ["10.180.0.4"], nodeName: "node1" },
            { addresses: ["10.180.1.4"], nodeName: "node2" },
          ],
          p80,
        ),
        makeSlice("ns", "remote", "a", [{ addresses: ["10.180.1.5"], nodeName: "node2" }], p80),
      ],
    );
    const r = renderIPVS(ipvsOptions(), maps);
    assert.deepEqual(vsLines(r.ipvsadmFull), [
      "-A -t 1.2.3.4:80 -s rr",
      "-a -t 1.2.3.4:80 -r 10.180.0.4:80 -m -w 1",
      "-A -t 172.30.0.44:80 -s rr",
      "-a -t 172.30.0.44:80 -r 10.180.0.4:80 -m -w 1",
      "-a -t 172.30.0.44:80 -r 10.180.1.4:80 -m -w 1",
      "-A -t 172.30.0.45:80 -s rr",
      "-a -t 172.30.0.45:80 -r 10.180.1.5:80 -m -w 1",
      "-A -t 192.168.0.2:3004 -s rr",
      "-a -t 192.168.0.2:3004 -r 10.180.0.4:80 -m -w 1",
      "-A -t 192.168.0.2:3005 -s rr",
      "-a -t 192.168.0.2:3005 -r 10.180.1.5:80 -m -w 1",
      "-A -t 5.6.7.8:80 -s rr",
      "-a -t 5.6.7.8:80 -r 10.180.1.5:80 -m -w 1",
    ]);
    assert.deepEqual(r.noLocalEndpoints, { internal: 0, external: 1 });
    const local = members(r.ipsetFull).filter((m) => /LOCAL|HEALTH/.test(m));
    assert.deepEqual(local, [
      "KUBE-LOAD-BALANCER-LOCAL 1.2.3.4,tcp:80",
      "KUBE-LOAD-BALANCER-LOCAL 5.6.7.8,tcp:80",
      "KUBE-NODE-PORT-LOCAL-TCP 3004",
      "KUBE-NODE-PORT-LOCAL-TCP 3005",
      "KUBE-HEALTH-CHECK-NODE-PORT 4004",
      "KUBE-HEALTH-CHECK-NODE-PORT 4005",
    ]);
  });

  test("LB source ranges: firewall sets, and a node outside the ranges may not reach its own VIP", () => {
    const svc = (name: string, ip: string, vip: string, ranges: string[]) =>
      makeService(
        "ns",
        name,
        { type: "LoadBalancer", clusterIP: ip, loadBalancerSourceRanges: ranges, ports: tcp80 },
        { loadBalancer: { ingress: [{ ip: vip }] } },
      );
    const maps = buildMaps(
      "IPv4",
      [
        svc("outside", "172.30.0.47", "1.2.3.4", ["203.0.113.0/25"]),
        svc("inside", "172.30.0.48", "5.6.7.8", ["203.0.113.0/25", "192.168.0.0/24"]),
      ],
      [],
    );
    const r = renderIPVS(ipvsOptions(), maps);
    assert.deepEqual(
      members(r.ipsetFull).filter((m) => m.includes("LOAD-BALANCER")),
      [
        "KUBE-LOAD-BALANCER 1.2.3.4,tcp:80",
        "KUBE-LOAD-BALANCER 5.6.7.8,tcp:80",
        "KUBE-LOAD-BALANCER-FW 1.2.3.4,tcp:80",
        "KUBE-LOAD-BALANCER-FW 5.6.7.8,tcp:80",
        "KUBE-LOAD-BALANCER-SOURCE-IP 5.6.7.8,tcp:80,5.6.7.8",
        "KUBE-LOAD-BALANCER-SOURCE-CIDR 1.2.3.4,tcp:80,203.0.113.0/25",
        "KUBE-LOAD-BALANCER-SOURCE-CIDR 5.6.7.8,tcp:80,192.168.0.0/24",
        "KUBE-LOAD-BALANCER-SOURCE-CIDR 5.6.7.8,tcp:80,203.0.113.0/25",
      ],
    );
    const filter = r.iptablesRestore
      .split("\n")
      .filter((l) => /^-A (KUBE-PROXY-FIREWALL|KUBE-SOURCE-RANGES-FIREWALL|KUBE-IPVS-OUT-FILTER) /.test(l));
    assert.deepEqual(filter, [
      '-A KUBE-PROXY-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port for load balancer with sourceRange" -m set --match-set KUBE-LOAD-BALANCER-FW dst,dst -j KUBE-SOURCE-RANGES-FIREWALL',
      '-A KUBE-SOURCE-RANGES-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port + source cidr for packet filter purpose" -m set --match-set KUBE-LOAD-BALANCER-SOURCE-CIDR dst,dst,src -j RETURN',
      '-A KUBE-SOURCE-RANGES-FIREWALL -m comment --comment "Kubernetes service load balancer ip + port + source IP for packet filter purpose" -m set --match-set KUBE-LOAD-BALANCER-SOURCE-IP dst,dst,src -j RETURN',
      "-A KUBE-SOURCE-RANGES-FIREWALL -j DROP",
      "-A KUBE-IPVS-OUT-FILTER -s 1.2.3.4 -m ipvs --vaddr 1.2.3.4 --vproto tcp --vport 80 -j DROP",
    ]);
  });

  test("no endpoints and terminating-only: servers without reals, serving-terminating ones at weight 1", () => {
    const maps = buildMaps(
      "IPv4",
      [
        makeService("ns1", "none", { clusterIP: "172.30.0.41", ports: tcp80 }),
        makeService("ns1", "term", { clusterIP: "172.30.0.42", ports: tcp80 }),
      ],
      [
        makeSlice(
          "ns1",
          "term",
          "a",
          [
            { addresses: ["10.180.0.1"], conditions: { ready: false, serving: true, terminating: true } },
            { addresses: ["10.180.0.2"], conditions: { ready: false, serving: false, terminating: true } },
          ],
          p80,
        ),
      ],
    );
    assert.deepEqual(vsLines(renderIPVS(ipvsOptions(), maps).ipvsadmFull), [
      "-A -t 172.30.0.41:80 -s rr",
      "-A -t 172.30.0.42:80 -s rr",
      "-a -t 172.30.0.42:80 -r 10.180.0.1:80 -m -w 1",
    ]);
  });

  test("IPv6: KUBE-6- set names cut to 31 characters, bracketed servers, ::1 return", () => {
    const maps = buildMaps(
      "IPv6",
      [
        makeService(
          "ns1",
          "svc1",
          {
            type: "LoadBalancer",
            clusterIP: "fd00:172:30::41",
            ipFamilies: ["IPv6"],
            loadBalancerSourceRanges: ["fd00:203:113::/64"],
            ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
          },
          { loadBalancer: { ingress: [{ ip: "fd00:1:2:3::4" }] } },
        ),
      ],
      [makeSlice("ns1", "svc1", "a", [{ addresses: ["fd00:10:180::1"] }], p80, "IPv6")],
    );
    const r = renderIPVS(ipvsOptions("IPv6"), maps);
    assert.deepEqual(vsLines(r.ipvsadmFull), [
      "-A -t [fd00:172:30::41]:80 -s rr",
      "-a -t [fd00:172:30::41]:80 -r [fd00:10:180::1]:80 -m -w 1",
      "-A -t [fd00:192:168::2]:3001 -s rr",
      "-a -t [fd00:192:168::2]:3001 -r [fd00:10:180::1]:80 -m -w 1",
      "-A -t [fd00:1:2:3::4]:80 -s rr",
      "-a -t [fd00:1:2:3::4]:80 -r [fd00:10:180::1]:80 -m -w 1",
    ]);
    assert.ok(r.ipsetFull.includes("create KUBE-6-LOAD-BALANCER-SOURCE-CID hash:ip,port,net family inet6"));
    assert.ok(r.ipsetFull.includes("create KUBE-6-NODE-PORT-TCP bitmap:port range 0-65535 -exist"));
    assert.ok(
      members(r.ipsetFull).includes("KUBE-6-LOAD-BALANCER-SOURCE-CID fd00:1:2:3::4,tcp:80,fd00:203:113::/64"),
    );
    assert.ok(r.iptablesRestore.includes("-A KUBE-SERVICES -s ::1/128 -j RETURN\n"));
    assert.ok(
      r.iptablesRestore.includes("--match-set KUBE-6-CLUSTER-IP dst,dst ! -s fd00:10::/32 -j KUBE-MARK-MASQ"),
    );
    for (const line of r.ipsetFull.split("\n").filter((l) => l.startsWith("create"))) {
      assert.ok((line.split(" ")[1] ?? "").length <= 31, line);
    }
  });

  test("masquerade choice: masqueradeAll, a detector, or only VIP-sourced node traffic", () => {
    const maps = buildMaps(
      "IPv4",
      [makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80 })],
      [],
    );
    const rule = (extra: Parameters<typeof ipvsOptions>[1]) =>
      renderIPVS(ipvsOptions("IPv4", extra), maps)
        .iptablesRestore.split("\n")
        .find((l) => l.includes("KUBE-CLUSTER-IP") && l.includes("MARK-MASQ"))
        ?.replace(/.*KUBE-CLUSTER-IP /, "");
    assert.equal(rule({ masqueradeAll: true }), "dst,dst -j KUBE-MARK-MASQ");
    assert.equal(rule({}), "dst,dst ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ");
    assert.equal(rule({ localDetector: { mode: "none" } }), "src,dst -j KUBE-MARK-MASQ");
  });
});
