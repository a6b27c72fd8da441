// The tracer's paths through iptables: the rules matched, the statistic match's probabilities, and
// the forms iptables-save prints back (--set-xmark). Address plan: ../../src/testing/fixtures.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeIPTables } from "../../src/iptables/fake.js";
import { renderIPTables } from "../../src/iptables/render.js";
import { ensureJumpChains } from "../../src/iptables/skeleton.js";
import { tracePacket } from "../../src/iptables/tracer.js";
import {
  buildMaps,
  EXTERNAL_CLIENT,
  iptOptions,
  makeService,
  makeSlice,
  NODE_IP,
  POD_CLIENT,
} from "../../src/testing/fixtures.js";

function rendered(ips: string[]): FakeIPTables {
  const ipt = new FakeIPTables();
  ensureJumpChains(ipt);
  const service = makeService("ns1", "svc1", {
    clusterIP: "172.30.0.41",
    ports: [{ name: "p80", port: 80, protocol: "TCP" }],
  });
  const slice = makeSlice(
    "ns1",
    "svc1",
    "a",
    ips.map((ip) => ({ addresses: [ip] })),
    [{ name: "p80", port: 80 }],
  );
  ipt.restore(renderIPTables(iptOptions(), { ...buildMaps("IPv4", [service], [slice]), now: 0 }).restore);
  return ipt;
}

const toClusterIP = { sourceIP: POD_CLIENT, destIP: "172.30.0.41", destPort: 80 };

describe("iptables trace paths", () => {
  test("three endpoints: the statistic matches give each a third", () => {
    const r = tracePacket(rendered(["10.180.0.1", "10.180.1.1", "10.180.2.1"]), [NODE_IP], toClusterIP);
    assert.deepEqual(r.errors, []);
    assert.deepEqual(
      r.paths.map((p) => p.output),
      ["10.180.0.1:80", "10.180.1.1:80", "10.180.2.1:80"],
    );
    // The renderer writes 0.3333333333 and 0.5000000000, rounded to ten digits.
    for (const p of r.paths)
      assert.ok(Math.abs(p.probability - 1 / 3) < 1e-9, `${p.output}: ${p.probability}`);
    assert.ok(Math.abs(r.paths.reduce((s, p) => s + p.probability, 0) - 1) < 1e-12);
  });

  test("the steps are the rules matched, chain by chain, comments apart", () => {
    const r = tracePacket(rendered(["10.180.0.1", "10.180.1.1"]), [NODE_IP], toClusterIP);
    const steps = r.paths[1]?.steps ?? [];
    const chains = steps.map((s) => `${s.table} ${s.chain}`);
    assert.deepEqual(chains.slice(0, 4), [
      "nat PREROUTING",
      "nat KUBE-SERVICES",
      "nat KUBE-SVC-XPGD46QRK7WJZT7O",
      "nat KUBE-SEP-TOIS5JUHRKSSXDL7",
    ]);
    const svc = steps[2];
    assert.equal(svc?.comment, "ns1/svc1:p80 -> 10.180.1.1:80");
    assert.doesNotMatch(svc?.rule ?? "", /comment/);
    assert.match(steps[3]?.rule ?? "", /-j DNAT --to-destination 10\.180\.1\.1:80$/);
  });

  test("rules as iptables-save prints them (--set-xmark) still masquerade", () => {
    const ipt = rendered(["10.180.0.1"]);
    const saved = ipt
      .dump(["nat"])
      .replace(/-j MARK --or-mark 0x0*4000/, "-j MARK --set-xmark 0x4000/0x4000")
      .replace(/-j MARK --xor-mark 0x0*4000/, "-j MARK --set-xmark 0x4000/0x0");
    assert.match(saved, /--set-xmark 0x4000\/0x0/);
    const fromSave = new FakeIPTables();
    fromSave.restore(saved, { noflush: false });
    const r = tracePacket(fromSave, [NODE_IP], { ...toClusterIP, sourceIP: EXTERNAL_CLIENT });
    assert.deepEqual(r.errors, []);
    assert.equal(r.output, "10.180.0.1:80");
    assert.equal(r.masq, true);
    // The mark was cleared before masquerading, as KUBE-POSTROUTING does.
    assert.ok(r.paths[0]?.steps.some((s) => s.chain === "KUBE-POSTROUTING" && /MASQUERADE/.test(s.rule)));
  });

  test("session affinity as iptables-save prints it (recent's --mask, --rsource): half each", () => {
    const ipt = new FakeIPTables();
    ipt.restore(
      [
        "*nat",
        ":PREROUTING ACCEPT [0:0]",
        ":KUBE-SVC-A - [0:0]",
        ":KUBE-SEP-1 - [0:0]",
        ":KUBE-SEP-2 - [0:0]",
        "-A PREROUTING -d 172.30.0.41/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-A",
        "-A KUBE-SVC-A -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-1 --mask 255.255.255.255 --rsource -j KUBE-SEP-1",
        "-A KUBE-SVC-A -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-1",
        "-A KUBE-SVC-A -j KUBE-SEP-2",
        "-A KUBE-SEP-1 -p tcp -m recent --set --name KUBE-SEP-1 --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.180.0.1:80",
        "-A KUBE-SEP-2 -p tcp -m tcp -j DNAT --to-destination 10.180.2.1:80",
        "COMMIT",
        "",
      ].join("\n"),
    );
    const r = tracePacket(ipt, [NODE_IP], toClusterIP);
    assert.deepEqual(r.errors, []);
    assert.deepEqual(
      r.paths.map((p) => [p.output, p.probability]),
      [
        ["10.180.0.1:80", 0.5],
        ["10.180.2.1:80", 0.5],
      ],
    );
  });

  test("--set-mark and --set-xmark apply their mask", () => {
    const ipt = new FakeIPTables();
    ipt.restore(
      [
        "*nat",
        ":PREROUTING ACCEPT [0:0]",
        "-A PREROUTING -j MARK --set-mark 0xff/0xff",
        "-A PREROUTING -j MARK --set-xmark 0x1/0x0f",
        "-A PREROUTING -m mark --mark 0xf1/0xff -j DNAT --to-destination 10.180.0.9:80",
        "COMMIT",
        "",
      ].join("\n"),
    );
    const r = tracePacket(ipt, [NODE_IP], toClusterIP);
    assert.deepEqual(r.errors, []);
    assert.equal(r.output, "10.180.0.9:80");
  });
});
