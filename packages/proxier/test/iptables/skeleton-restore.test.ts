import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { skeletonRestore } from "../../src/iptables/skeleton-restore.js";

const empty = { filter: "*filter\nCOMMIT\n", nat: "*nat\nCOMMIT\n", mangle: "*mangle\nCOMMIT\n" };

describe("skeletonRestore", () => {
  test("on empty tables: every chain, every jump (prepended), the canaries", () => {
    const r = skeletonRestore(empty);
    assert.match(r, /^\*filter\n:KUBE-EXTERNAL-SERVICES - \[0:0\]\n/);
    assert.ok(r.includes('-I PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES'));
    assert.ok(r.includes("*mangle\n:KUBE-PROXY-CANARY - [0:0]\nCOMMIT"));
    assert.equal(r.split("\n").filter((l) => l.startsWith("-I ")).length, 14);
  });

  test("kubelet's existing KUBE-FIREWALL is not declared again (that would flush it)", () => {
    const filter = [
      "*filter",
      ":KUBE-FIREWALL - [0:0]",
      "-A INPUT -j KUBE-FIREWALL",
      '-A KUBE-FIREWALL -m comment --comment "kubelet rule" -j DROP',
      "COMMIT",
    ].join("\n");
    const r = skeletonRestore({ ...empty, filter });
    assert.ok(!r.includes(":KUBE-FIREWALL "));
    assert.ok(!r.includes("-I INPUT -j KUBE-FIREWALL"));
    assert.ok(r.includes("-I OUTPUT -j KUBE-FIREWALL"));
  });
});
