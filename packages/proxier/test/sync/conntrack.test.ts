// Which UDP conntrack entries a change makes stale, and the conntrack commands that follow.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConntrackCleaner, conntrackDeleteArgs } from "../../src/conntrack/conntrack.js";
import { staleConntrackFilters } from "../../src/conntrack/stale.js";
import { fakeExec } from "../apply/fake-exec.js";
import { buildMaps, makeService, makeSlice } from "../fixtures.js";

const udp = (protocol: "UDP" | "TCP" = "UDP") =>
  makeService("ns1", "dns", {
    type: "NodePort",
    clusterIP: "172.30.0.10",
    externalIPs: ["192.168.0.100"],
    ports: [{ name: "dns", port: 53, protocol, nodePort: 30053 }],
  });
const view = (ips: string[], protocol: "UDP" | "TCP" = "UDP", ready = true) =>
  buildMaps(
    "IPv4",
    [udp(protocol)],
    [
      makeSlice(
        "ns1",
        "dns",
        "a",
        ips.map((ip) => ({ addresses: [ip], conditions: { ready } })),
        [{ name: "dns", port: 53, protocol }],
      ),
    ],
  );

describe("stale conntrack entries", () => {
  test("a removed UDP endpoint: entries DNATed to it, per service IP and NodePort", () => {
    assert.deepEqual(staleConntrackFilters(view(["10.180.0.1", "10.180.0.2"]), view(["10.180.0.2"])), [
      { protocol: "udp", origDst: "172.30.0.10", dstNat: "10.180.0.1" },
      { protocol: "udp", origDst: "192.168.0.100", dstNat: "10.180.0.1" },
      { protocol: "udp", origPort: 30053, dstNat: "10.180.0.1" },
    ]);
  });

  test("the first ready endpoint: entries created while traffic was rejected", () => {
    assert.deepEqual(staleConntrackFilters(view([]), view(["10.180.0.1"])), [
      { protocol: "udp", origDst: "172.30.0.10" },
      { protocol: "udp", origDst: "192.168.0.100" },
      { protocol: "udp", origPort: 30053 },
    ]);
  });

  test("a deleted UDP service: entries to its IPs", () => {
    const gone = buildMaps("IPv4", [], []);
    assert.deepEqual(
      staleConntrackFilters(view([]), gone).map((f) => f.origDst),
      ["172.30.0.10", "192.168.0.100"],
    );
  });

  test("TCP services and unchanged endpoints leave nothing stale", () => {
    assert.deepEqual(staleConntrackFilters(view(["10.180.0.1"], "TCP"), view([], "TCP")), []);
    assert.deepEqual(staleConntrackFilters(view(["10.180.0.1"]), view(["10.180.0.1"])), []);
  });

  test("conntrack arguments, and 'nothing deleted' is not an error", async () => {
    assert.deepEqual(conntrackDeleteArgs({ protocol: "udp", origDst: "172.30.0.10", dstNat: "10.180.0.1" }), [
      "-D",
      "-p",
      "udp",
      "--orig-dst",
      "172.30.0.10",
      "--dst-nat",
      "10.180.0.1",
    ]);
    assert.deepEqual(conntrackDeleteArgs({ protocol: "udp", origPort: 30053, dstNat: "fd00:10:180::1" }), [
      "-f",
      "ipv6",
      "-D",
      "-p",
      "udp",
      "--dport",
      "30053",
      "--dst-nat",
      "fd00:10:180::1",
    ]);
    const { exec } = fakeExec((c) =>
      c.args.includes("172.30.0.10")
        ? { code: 1, stderr: "conntrack v1.4.7 (conntrack-tools): 0 flow entries have been deleted.\n" }
        : c.args.includes("192.168.0.100")
          ? { code: 0, stderr: "conntrack v1.4.7 (conntrack-tools): 2 flow entries have been deleted.\n" }
          : { code: 1, stderr: "conntrack v1.4.7 (conntrack-tools): Operation failed: Permission denied\n" },
    );
    const r = await new ConntrackCleaner(exec).delete([
      { protocol: "udp", origDst: "172.30.0.10" },
      { protocol: "udp", origDst: "192.168.0.100" },
      { protocol: "udp", origPort: 30053 },
    ]);
    assert.equal(r.deleted, 2);
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0]?.message ?? "", /--dport 30053: .*Permission denied/);
  });
});
