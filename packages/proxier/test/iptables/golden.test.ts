// Golden tests: the restore input for small clusters, compared after canonical sorting.
// The full layout is checked against the real kube-proxy in ../upstream-diff.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeIPTables } from "../../src/iptables/fake.js";
import { LARGE_CLUSTER_ENDPOINTS_THRESHOLD, renderIPTables } from "../../src/iptables/render.js";
import { buildMaps, iptOptions, makeService, makeSlice } from "../../src/testing/fixtures.js";
import { goldenServices, goldenSlices } from "../golden-cluster.js";
import { assertIPTablesEqual } from "../ipt-helpers.js";
import { dedent } from "../nft-helpers.js";

const p80 = [{ name: "p80", port: 80 }];
const tcp80 = [{ name: "p80", port: 80, protocol: "TCP" as const }];

const baseFilter = dedent(`
  *filter
  :KUBE-SERVICES - [0:0]
  :KUBE-EXTERNAL-SERVICES - [0:0]
  :KUBE-FORWARD - [0:0]
  :KUBE-NODEPORTS - [0:0]
  :KUBE-PROXY-FIREWALL - [0:0]
  :KUBE-FIREWALL - [0:0]
  -A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
  -A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
  -A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00004000/0x00004000 -j ACCEPT
  -A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
`);
const baseNat = dedent(`
  :KUBE-SERVICES - [0:0]
  :KUBE-NODEPORTS - [0:0]
  :KUBE-POSTROUTING - [0:0]
  :KUBE-MARK-MASQ - [0:0]
  -A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN
  -A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000
  -A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
  -A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000
`);
const natTail =
  '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS';

describe("iptables golden", () => {
  test("empty cluster is the skeleton", () => {
    const r = renderIPTables(iptOptions(), { ...buildMaps("IPv4", [], []), now: 0 });
    assertIPTablesEqual(r.restore, `${baseFilter}\nCOMMIT\n*nat\n${baseNat}\n${natTail}\nCOMMIT\n`);
  });

  test("ClusterIP with two endpoints and one without endpoints", () => {
    const maps = buildMaps(
      "IPv4",
      [
        makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80 }),
        makeService("ns6", "svc6", { clusterIP: "172.30.0.46", ports: tcp80 }),
      ],
      [makeSlice("ns1", "svc1", "a", [{ addresses: ["10.180.0.1"] }, { addresses: ["10.180.0.2"] }], p80)],
    );
    const r = renderIPTables(iptOptions(), { ...maps, now: 0 });
    const expected = dedent(`
      ${baseFilter}
      -A KUBE-SERVICES -m comment --comment "ns6/svc6:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.46 --dport 80 -j REJECT
      COMMIT
      *nat
      ${baseNat}
      :KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
      :KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
      :KUBE-SEP-LXVODXWDISEETFEF - [0:0]
      -A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
      -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-SXIVWICOYRO3J4NJ
      -A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.2:80" -j KUBE-SEP-LXVODXWDISEETFEF
      -A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ
      -A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80
      -A KUBE-SEP-LXVODXWDISEETFEF -m comment --comment ns1/svc1:p80 -s 10.180.0.2 -j KUBE-MARK-MASQ
      -A KUBE-SEP-LXVODXWDISEETFEF -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.2:80
      ${natTail}
      COMMIT
    `);
    assertIPTablesEqual(r.restore, expected);
  });

  test("IPv6 with affinity: recent matches, bracketed DNAT, no localhost NodePorts", () => {
    const maps = buildMaps(
      "IPv6",
      [
        makeService("ns1", "svc1", {
          clusterIP: "fd00:172:30::41",
          ipFamilies: ["IPv6"],
          sessionAffinity: "ClientIP",
          ports: tcp80,
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
    // The top-level chains' rules come before the per-service chains' (order matters only within a chain).
    const nat = renderIPTables(iptOptions("IPv6"), { ...maps, now: 0 })
      .restore.split("\n")
      .filter((l) => /KUBE-(SVC|SEP)-|NOTE/.test(l));
    assert.deepEqual(nat, [
      ":KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]",
      ":KUBE-SEP-OGYCNMB4EMRUSJ6N - [0:0]",
      ":KUBE-SEP-P2NYGPDH7GVZACN4 - [0:0]",
      '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d fd00:172:30::41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O',
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS',
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d fd00:172:30::41 --dport 80 ! -s fd00:10::/32 -j KUBE-MARK-MASQ',
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> [fd00:10:180::1]:80" -m recent --name KUBE-SEP-OGYCNMB4EMRUSJ6N --rcheck --seconds 10800 --reap -j KUBE-SEP-OGYCNMB4EMRUSJ6N',
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> [fd00:10:180::2]:80" -m recent --name KUBE-SEP-P2NYGPDH7GVZACN4 --rcheck --seconds 10800 --reap -j KUBE-SEP-P2NYGPDH7GVZACN4',
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> [fd00:10:180::1]:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-OGYCNMB4EMRUSJ6N',
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> [fd00:10:180::2]:80" -j KUBE-SEP-P2NYGPDH7GVZACN4',
      "-A KUBE-SEP-OGYCNMB4EMRUSJ6N -m comment --comment ns1/svc1:p80 -s fd00:10:180::1 -j KUBE-MARK-MASQ",
      "-A KUBE-SEP-OGYCNMB4EMRUSJ6N -m comment --comment ns1/svc1:p80 -m recent --name KUBE-SEP-OGYCNMB4EMRUSJ6N --set -m tcp -p tcp -j DNAT --to-destination [fd00:10:180::1]:80",
      "-A KUBE-SEP-P2NYGPDH7GVZACN4 -m comment --comment ns1/svc1:p80 -s fd00:10:180::2 -j KUBE-MARK-MASQ",
      "-A KUBE-SEP-P2NYGPDH7GVZACN4 -m comment --comment ns1/svc1:p80 -m recent --name KUBE-SEP-P2NYGPDH7GVZACN4 --set -m tcp -p tcp -j DNAT --to-destination [fd00:10:180::2]:80",
    ]);
  });

  test("probabilities are 1/(n-i) with ten decimals", () => {
    const ips = ["10.180.0.1", "10.180.0.2", "10.180.0.3", "10.180.0.4", "10.180.0.5", "10.180.0.6"];
    const maps = buildMaps(
      "IPv4",
      [makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80 })],
      [
        makeSlice(
          "ns1",
          "svc1",
          "a",
          ips.map((ip) => ({ addresses: [ip] })),
          p80,
        ),
      ],
    );
    const r = renderIPTables(iptOptions(), { ...maps, now: 0 });
    const odds = [...r.restore.matchAll(/--probability (\S+)/g)].map((m) => m[1]);
    assert.deepEqual(odds, ["0.1666666667", "0.2000000000", "0.2500000000", "0.3333333333", "0.5000000000"]);
  });

  test("the golden cluster restores into a fake without dangling jumps", () => {
    const ipt = new FakeIPTables();
    const r = renderIPTables(iptOptions(), {
      ...buildMaps(
        "IPv4",
        goldenServices((n) => `172.30.0.${n}`),
        goldenSlices(),
      ),
      now: 0,
    });
    ipt.restore(r.restore);
    assert.deepEqual(r.noLocalEndpoints, { internal: 1, external: 1 });
    assert.equal(
      r.rulesWritten.filter,
      ipt
        .dump(["filter"])
        .split("\n")
        .filter((l) => l.startsWith("-A")).length,
    );
    assert.equal(
      r.rulesWritten.nat,
      ipt
        .dump(["nat"])
        .split("\n")
        .filter((l) => l.startsWith("-A")).length,
    );
  });

  test("large-cluster mode drops per-endpoint comments above the threshold", () => {
    const render = (count: number) => {
      const eps = Array.from({ length: count }, (_, i) => ({ addresses: [`10.180.${i >> 8}.${i & 255}`] }));
      const maps = buildMaps(
        "IPv4",
        [makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80 })],
        [makeSlice("ns1", "svc1", "a", eps, p80)],
      );
      return renderIPTables(iptOptions(), { ...maps, now: 0 });
    };
    const atThreshold = render(LARGE_CLUSTER_ENDPOINTS_THRESHOLD);
    assert.equal(atThreshold.largeClusterMode, false);
    assert.match(atThreshold.restore, /-A KUBE-SEP-\S+ -m comment --comment ns1\/svc1:p80 -s /);
    const above = render(LARGE_CLUSTER_ENDPOINTS_THRESHOLD + 1);
    assert.equal(above.largeClusterMode, true);
    const sepRules = above.restore.split("\n").filter((l) => /^-A KUBE-(SEP|SVC)-/.test(l));
    // Only the masquerade rule of KUBE-SVC (not per endpoint) keeps its comment.
    assert.deepEqual(
      sepRules.filter((l) => l.includes("--comment")),
      sepRules.filter((l) => l.includes("cluster IP")),
    );
    assert.equal(sepRules.filter((l) => l.includes("-j DNAT")).length, LARGE_CLUSTER_ENDPOINTS_THRESHOLD + 1);
  });
});
