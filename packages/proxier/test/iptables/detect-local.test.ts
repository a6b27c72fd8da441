// Each --detect-local-mode as the iptables renderer writes it: the two rules that need a
// pod-traffic match, and packets traced through them. ../upstream-diff.test.ts checks the
// interface modes against the real kube-proxy.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeIPTables } from "../../src/iptables/fake.js";
import { renderIPTables } from "../../src/iptables/render.js";
import { ensureJumpChains } from "../../src/iptables/skeleton.js";
import { tracePacket } from "../../src/iptables/tracer.js";
import type { LocalDetector } from "../../src/model/local-detector.js";
import {
  buildMaps,
  EXTERNAL_CLIENT,
  iptOptions,
  makeService,
  makeSlice,
  NODE_IP,
  NODE_NAME,
} from "../../src/testing/fixtures.js";

const SVC = "KUBE-SVC-XPGD46QRK7WJZT7O";
const EXT = "KUBE-EXT-XPGD46QRK7WJZT7O";

/** A NodePort with ETP=Local and endpoints here and on node2: the restore input. */
function render(localDetector: LocalDetector): string {
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
        [{ name: "p80", port: 80 }],
      ),
    ],
  );
  return renderIPTables(iptOptions("IPv4", { localDetector }), { ...maps, now: 0 }).restore;
}

const detectorRules = (restore: string) =>
  restore
    .split("\n")
    .filter((l) => l.startsWith(`-A ${SVC} `) || l.startsWith(`-A ${EXT} `))
    .filter((l) => l.includes(' cluster IP" ') || l.includes('"pod traffic for'));

const cases: { detector: LocalDetector; notLocal: string; local: string }[] = [
  {
    detector: { mode: "ClusterCIDR", cidr: "10.0.0.0/8" },
    notLocal: "! -s 10.0.0.0/8",
    local: "-s 10.0.0.0/8",
  },
  {
    detector: { mode: "NodeCIDR", cidr: "10.180.0.0/24" },
    notLocal: "! -s 10.180.0.0/24",
    local: "-s 10.180.0.0/24",
  },
  { detector: { mode: "BridgeInterface", interfaceName: "cbr0" }, notLocal: "! -i cbr0", local: "-i cbr0" },
  { detector: { mode: "InterfaceNamePrefix", prefix: "veth" }, notLocal: "! -i veth+", local: "-i veth+" },
];

describe("iptables detect-local rules", () => {
  for (const c of cases) {
    test(c.detector.mode, () => {
      assert.deepEqual(detectorRules(render(c.detector)), [
        `-A ${SVC} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ${c.notLocal} -j KUBE-MARK-MASQ`,
        `-A ${EXT} -m comment --comment "pod traffic for ns1/svc1:p80 external destinations" ${c.local} -j ${SVC}`,
      ]);
    });
  }

  test("no detector: neither rule is written", () => {
    assert.deepEqual(detectorRules(render({ mode: "none" })), []);
  });
});

describe("iptables detect-local by interface, traced", () => {
  const load = (detector: LocalDetector) => {
    const ipt = new FakeIPTables();
    ensureJumpChains(ipt);
    ipt.restore(render(detector));
    return ipt;
  };
  const both = "10.180.0.1:80, 10.180.2.1:80";
  const flows = [
    { detector: { mode: "BridgeInterface", interfaceName: "cbr0" }, from: "cbr0", output: both },
    { detector: { mode: "BridgeInterface", interfaceName: "cbr0" }, from: "cbr1", output: "10.180.0.1:80" },
    { detector: { mode: "InterfaceNamePrefix", prefix: "veth" }, from: "veth1234", output: both },
    { detector: { mode: "InterfaceNamePrefix", prefix: "veth" }, from: "eth0", output: "10.180.0.1:80" },
  ] as const;
  for (const f of flows) {
    test(`${f.detector.mode}: NodePort from ${f.from} reaches ${f.output}`, () => {
      // Same source address every time: only the input interface decides.
      const r = tracePacket(load(f.detector), [NODE_IP], {
        sourceIP: "10.180.0.5",
        destIP: NODE_IP,
        destPort: 3001,
        inInterface: f.from,
      });
      assert.deepEqual(r.errors, []);
      assert.equal(r.output, f.output);
    });
  }

  test("BridgeInterface: ClusterIP from outside the bridge is masqueraded, from the bridge is not", () => {
    const ipt = load({ mode: "BridgeInterface", interfaceName: "cbr0" });
    const trace = (inInterface: string) =>
      tracePacket(ipt, [NODE_IP], {
        sourceIP: EXTERNAL_CLIENT,
        destIP: "172.30.0.41",
        destPort: 80,
        inInterface,
      });
    assert.equal(trace("eth0").masq, true);
    assert.equal(trace("cbr0").masq, false);
  });
});
