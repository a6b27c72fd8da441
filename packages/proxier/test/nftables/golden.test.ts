// Golden tests: the full table for representative clusters, compared after canonical sorting.
// Address plan: see ../../src/testing/fixtures.ts.
import { describe, test } from "node:test";
import { FakeNFTables } from "../../src/nftables/fake.js";
import { renderNFTables } from "../../src/nftables/render.js";
import { buildMaps, makeService, makeSlice, NODE_NAME, nftOptions } from "../../src/testing/fixtures.js";
import { assertNFTEqual, dedent } from "../nft-helpers.js";

const baseRules = dedent(`
  add table ip kube-proxy { comment "rules for kube-proxy" ; }
  add set ip kube-proxy cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }
  add set ip kube-proxy hairpin-connections { type ipv4_addr . ipv4_addr . inet_proto . inet_service ; comment "service hairpin connections" ; }
  add set ip kube-proxy nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }
  add map ip kube-proxy firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }
  add map ip kube-proxy no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }
  add map ip kube-proxy no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }
  add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }
  add map ip kube-proxy service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }
  add chain ip kube-proxy cluster-ips-check
  add chain ip kube-proxy filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }
  add chain ip kube-proxy filter-output-pre-dnat { type filter hook output priority -110 ; }
  add chain ip kube-proxy filter-forward { type filter hook forward priority 0 ; }
  add chain ip kube-proxy filter-input { type filter hook input priority 0 ; }
  add chain ip kube-proxy filter-output { type filter hook output priority 0 ; }
  add chain ip kube-proxy firewall-check
  add chain ip kube-proxy masquerading
  add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }
  add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }
  add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }
  add chain ip kube-proxy nodeport-endpoints-check
  add chain ip kube-proxy reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }
  add chain ip kube-proxy services
  add chain ip kube-proxy service-endpoints-check
  add rule ip kube-proxy cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
  add rule ip kube-proxy cluster-ips-check ip daddr { 172.30.0.0/16 } drop comment "Drop traffic to unallocated ClusterIPs"
  add rule ip kube-proxy filter-prerouting-pre-dnat ct state new jump firewall-check
  add rule ip kube-proxy filter-forward ct state new jump service-endpoints-check
  add rule ip kube-proxy filter-forward ct state new jump cluster-ips-check
  add rule ip kube-proxy filter-input ct state new jump nodeport-endpoints-check
  add rule ip kube-proxy filter-input ct state new jump service-endpoints-check
  add rule ip kube-proxy filter-output ct state new jump service-endpoints-check
  add rule ip kube-proxy filter-output-pre-dnat ct state new jump firewall-check
  add rule ip kube-proxy filter-output ct state new jump cluster-ips-check
  add rule ip kube-proxy firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips
  add rule ip kube-proxy masquerading mark and 0x00004000 != 0 mark set mark xor 0x00004000 masquerade fully-random
  add rule ip kube-proxy masquerading ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
  add rule ip kube-proxy nat-output jump services
  add rule ip kube-proxy nat-postrouting jump masquerading
  add rule ip kube-proxy nat-prerouting jump services
  add rule ip kube-proxy nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
  add rule ip kube-proxy reject-chain reject
  add rule ip kube-proxy services ip daddr @cluster-ips ip saddr != 10.0.0.0/8 mark set mark or 0x00004000 comment "masquerade clusterIP traffic from outside cluster"
  add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
  add rule ip kube-proxy services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
  add element ip kube-proxy nodeport-ips { 192.168.0.2 }
  add rule ip kube-proxy service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services
`);

function syncAndDump(maps: ReturnType<typeof buildMaps>, family: "IPv4" | "IPv6" = "IPv4"): string {
  const nft = new FakeNFTables(family === "IPv4" ? "ip" : "ip6", "kube-proxy");
  nft.run(renderNFTables(nftOptions(family), { ...maps, now: 0 }).transaction);
  return nft.dump();
}

const p80 = [{ name: "p80", port: 80 }];

describe("nftables golden", () => {
  test("empty cluster is the skeleton", () => {
    assertNFTEqual(syncAndDump(buildMaps("IPv4", [], [])), baseRules);
  });

  test("ClusterIP, ETP=Local LB without local endpoints, NodePort, affinity LB with ranges, no endpoints", () => {
    // Only endpoints on this node can hairpin, so only they enter @hairpin-connections.
    const maps = buildMaps(
      "IPv4",
      [
        makeService("ns1", "svc1", {
          clusterIP: "172.30.0.41",
          ports: [{ name: "p80", port: 80, protocol: "TCP" }],
        }),
        makeService(
          "ns2",
          "svc2",
          {
            type: "LoadBalancer",
            externalTrafficPolicy: "Local",
            clusterIP: "172.30.0.42",
            externalIPs: ["192.168.99.22"],
            healthCheckNodePort: 30000,
            ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
          },
          { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } },
        ),
        makeService("ns3", "svc3", {
          type: "NodePort",
          clusterIP: "172.30.0.43",
          ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3003 }],
        }),
        makeService(
          "ns5",
          "svc5",
          {
            type: "LoadBalancer",
            clusterIP: "172.30.0.45",
            loadBalancerSourceRanges: [" 203.0.113.0/25"],
            sessionAffinity: "ClientIP",
            sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
            ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3002 }],
          },
          { loadBalancer: { ingress: [{ ip: "5.6.7.8" }] } },
        ),
        makeService("ns6", "svc6", {
          clusterIP: "172.30.0.46",
          ports: [{ name: "p80", port: 80, protocol: "TCP" }],
        }),
      ],
      [
        makeSlice(
          "ns1",
          "svc1",
          "a",
          [{ addresses: ["10.180.0.1"], nodeName: NODE_NAME }, { addresses: ["10.180.1.1"] }],
          p80,
        ),
        makeSlice("ns2", "svc2", "a", [{ addresses: ["10.180.0.2"], nodeName: "node2" }], p80),
        makeSlice("ns3", "svc3", "a", [{ addresses: ["10.180.0.3"] }], p80),
        makeSlice("ns5", "svc5", "a", [{ addresses: ["10.180.0.3"], nodeName: NODE_NAME }], p80),
      ],
    );
    const expected = dedent(`
      add chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80
      add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.180.0.1 . 80 , 1 : 10.180.1.1 . 80 }
      add element ip kube-proxy cluster-ips { 172.30.0.41 }
      add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }
      add element ip kube-proxy hairpin-connections { 10.180.0.1 . 10.180.0.1 . tcp . 80 }

      add chain ip kube-proxy service-42NFTM6N-ns2/svc2/tcp/p80
      add rule ip kube-proxy service-42NFTM6N-ns2/svc2/tcp/p80 meta l4proto tcp dnat to 10.180.0.2:80
      add chain ip kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80
      add rule ip kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80 ip saddr 10.0.0.0/8 goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit pod traffic"
      add rule ip kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80 fib saddr type local mark set mark or 0x00004000 comment "masquerade local traffic"
      add rule ip kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80 fib saddr type local goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit local traffic"
      add element ip kube-proxy cluster-ips { 172.30.0.42 }
      add element ip kube-proxy service-ips { 172.30.0.42 . tcp . 80 : goto service-42NFTM6N-ns2/svc2/tcp/p80 }
      add element ip kube-proxy service-ips { 192.168.99.22 . tcp . 80 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
      add element ip kube-proxy service-ips { 1.2.3.4 . tcp . 80 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
      add element ip kube-proxy service-nodeports { tcp . 3001 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
      add element ip kube-proxy no-endpoint-nodeports { tcp . 3001 comment "ns2/svc2:p80" : drop }
      add element ip kube-proxy no-endpoint-services { 1.2.3.4 . tcp . 80 comment "ns2/svc2:p80" : drop }
      add element ip kube-proxy no-endpoint-services { 192.168.99.22 . tcp . 80 comment "ns2/svc2:p80" : drop }

      add chain ip kube-proxy service-4AT6LBPK-ns3/svc3/tcp/p80
      add rule ip kube-proxy service-4AT6LBPK-ns3/svc3/tcp/p80 meta l4proto tcp dnat to 10.180.0.3:80
      add chain ip kube-proxy external-4AT6LBPK-ns3/svc3/tcp/p80
      add rule ip kube-proxy external-4AT6LBPK-ns3/svc3/tcp/p80 mark set mark or 0x00004000 comment "masquerade"
      add rule ip kube-proxy external-4AT6LBPK-ns3/svc3/tcp/p80 goto service-4AT6LBPK-ns3/svc3/tcp/p80
      add element ip kube-proxy cluster-ips { 172.30.0.43 }
      add element ip kube-proxy service-ips { 172.30.0.43 . tcp . 80 : goto service-4AT6LBPK-ns3/svc3/tcp/p80 }
      add element ip kube-proxy service-nodeports { tcp . 3003 : goto external-4AT6LBPK-ns3/svc3/tcp/p80 }

      add set ip kube-proxy affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }
      add chain ip kube-proxy service-HVFWP5L3-ns5/svc5/tcp/p80
      add rule ip kube-proxy service-HVFWP5L3-ns5/svc5/tcp/p80 ip saddr @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80
      add rule ip kube-proxy service-HVFWP5L3-ns5/svc5/tcp/p80 numgen random mod 1 vmap { 0 : goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 }
      add chain ip kube-proxy external-HVFWP5L3-ns5/svc5/tcp/p80
      add rule ip kube-proxy external-HVFWP5L3-ns5/svc5/tcp/p80 mark set mark or 0x00004000 comment "masquerade"
      add rule ip kube-proxy external-HVFWP5L3-ns5/svc5/tcp/p80 goto service-HVFWP5L3-ns5/svc5/tcp/p80
      add chain ip kube-proxy endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80
      add rule ip kube-proxy endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 update @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 { ip saddr }
      add rule ip kube-proxy endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 meta l4proto tcp dnat to 10.180.0.3:80
      add chain ip kube-proxy firewall-HVFWP5L3-ns5/svc5/tcp/p80
      add rule ip kube-proxy firewall-HVFWP5L3-ns5/svc5/tcp/p80 ip saddr != { 203.0.113.0/25 } drop
      add element ip kube-proxy cluster-ips { 172.30.0.45 }
      add element ip kube-proxy service-ips { 172.30.0.45 . tcp . 80 : goto service-HVFWP5L3-ns5/svc5/tcp/p80 }
      add element ip kube-proxy service-ips { 5.6.7.8 . tcp . 80 : goto external-HVFWP5L3-ns5/svc5/tcp/p80 }
      add element ip kube-proxy service-nodeports { tcp . 3002 : goto external-HVFWP5L3-ns5/svc5/tcp/p80 }
      add element ip kube-proxy firewall-ips { 5.6.7.8 . tcp . 80 : goto firewall-HVFWP5L3-ns5/svc5/tcp/p80 }
      add element ip kube-proxy hairpin-connections { 10.180.0.3 . 10.180.0.3 . tcp . 80 }

      add element ip kube-proxy cluster-ips { 172.30.0.46 }
      add element ip kube-proxy no-endpoint-services { 172.30.0.46 . tcp . 80 comment "ns6/svc6:p80" : goto reject-chain }
    `);
    assertNFTEqual(syncAndDump(maps), baseRules + expected);
  });

  test("ETP=Local with a local endpoint goes through the local- chain", () => {
    const maps = buildMaps(
      "IPv4",
      [
        makeService("ns1", "svc1", {
          type: "NodePort",
          externalTrafficPolicy: "Local",
          clusterIP: "172.30.0.41",
          ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
        }),
      ],
      [
        makeSlice(
          "ns1",
          "svc1",
          "a",
          [
            { addresses: ["10.180.0.1"], nodeName: NODE_NAME },
            { addresses: ["10.180.2.1"], nodeName: "node2" },
          ],
          p80,
        ),
      ],
    );
    const dump = syncAndDump(maps);
    const local = dump.split("\n").filter((l) => l.includes("local-") || l.includes("external-"));
    assertNFTEqual(
      local.join("\n"),
      dedent(`
        add chain ip kube-proxy external-ULMVA6XW-ns1/svc1/tcp/p80
        add chain ip kube-proxy local-ULMVA6XW-ns1/svc1/tcp/p80
        add rule ip kube-proxy external-ULMVA6XW-ns1/svc1/tcp/p80 ip saddr 10.0.0.0/8 goto service-ULMVA6XW-ns1/svc1/tcp/p80 comment "short-circuit pod traffic"
        add rule ip kube-proxy external-ULMVA6XW-ns1/svc1/tcp/p80 fib saddr type local mark set mark or 0x00004000 comment "masquerade local traffic"
        add rule ip kube-proxy external-ULMVA6XW-ns1/svc1/tcp/p80 fib saddr type local goto service-ULMVA6XW-ns1/svc1/tcp/p80 comment "short-circuit local traffic"
        add rule ip kube-proxy external-ULMVA6XW-ns1/svc1/tcp/p80 goto local-ULMVA6XW-ns1/svc1/tcp/p80
        add rule ip kube-proxy local-ULMVA6XW-ns1/svc1/tcp/p80 meta l4proto tcp dnat to 10.180.0.1:80
        add element ip kube-proxy service-nodeports { tcp . 3001 : goto external-ULMVA6XW-ns1/svc1/tcp/p80 }
      `),
    );
  });

  test("IPv6 table uses ip6 matches and an ip6 DNAT map", () => {
    const maps = buildMaps(
      "IPv6",
      [
        makeService("ns1", "svc1", {
          clusterIP: "fd00:172:30::41",
          clusterIPs: ["fd00:172:30::41", "172.30.0.41"],
          ipFamilies: ["IPv6", "IPv4"],
          ports: [{ name: "p80", port: 80, protocol: "TCP" }],
        }),
      ],
      [
        makeSlice(
          "ns1",
          "svc1",
          "a",
          [{ addresses: ["fd00:10:180::1"] }, { addresses: ["fd00:10:180::2"] }],
          p80,
          "IPv6",
        ),
      ],
    );
    const dump = syncAndDump(maps, "IPv6");
    const svcLines = dump
      .split("\n")
      .filter(
        (l) =>
          l.includes("ns1/svc1") || l.includes("fd00:172:30::41 ") || l.includes("@cluster-ips ip6 saddr"),
      );
    assertNFTEqual(
      svcLines.join("\n"),
      dedent(`
        add chain ip6 kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80
        add rule ip6 kube-proxy services ip6 daddr @cluster-ips ip6 saddr != fd00:10::/32 mark set mark or 0x00004000 comment "masquerade clusterIP traffic from outside cluster"
        add rule ip6 kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 meta l4proto tcp dnat ip6 addr . port to numgen random mod 2 map { 0 : fd00:10:180::1 . 80 , 1 : fd00:10:180::2 . 80 }
        add element ip6 kube-proxy cluster-ips { fd00:172:30::41 }
        add element ip6 kube-proxy service-ips { fd00:172:30::41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }
      `),
    );
  });
});
