// Reading `conntrack -L` output. The lines are what conntrack v1.4.7 printed on this machine
// for entries made with `conntrack -I` in a network namespace.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { flowKey, parseConntrackLine, parseConntrackList } from "../../src/conntrack/flow.js";

const UNREPLIED =
  "udp      17 99 src=192.168.0.3 dst=172.30.0.53 sport=40053 dport=80 [UNREPLIED] src=10.180.0.1 dst=192.168.0.3 sport=80 dport=40053 mark=0 use=1";
const ASSURED_ZONE =
  "udp      17 99 src=192.168.0.3 dst=172.30.0.53 sport=40054 dport=80 [UNREPLIED] src=10.180.0.2 dst=192.168.0.3 sport=80 dport=40054 [ASSURED] mark=0 zone=3 use=1";
const IPV6 =
  "udp      17 99 src=fd00::3 dst=fd00:30::53 sport=40053 dport=80 [UNREPLIED] src=fd00:180::1 dst=fd00::3 sport=80 dport=40053 mark=0 use=1";
const TCP =
  "tcp      6 99 ESTABLISHED src=192.168.0.3 dst=172.30.0.53 sport=40053 dport=80 [UNREPLIED] src=10.180.0.1 dst=192.168.0.3 sport=80 dport=40053 mark=0 use=1";

describe("conntrack -L output", () => {
  test("the first tuple is the original direction, the second the reply", () => {
    assert.deepEqual(parseConntrackLine(UNREPLIED), {
      protocol: "udp",
      orig: { src: "192.168.0.3", dst: "172.30.0.53", sport: 40053, dport: 80 },
      reply: { src: "10.180.0.1", dst: "192.168.0.3", sport: 80, dport: 40053 },
      unreplied: true,
    });
  });

  test("flags, zone and a TCP state between the fields are skipped", () => {
    assert.deepEqual(parseConntrackLine(ASSURED_ZONE)?.reply, {
      src: "10.180.0.2",
      dst: "192.168.0.3",
      sport: 80,
      dport: 40054,
    });
    const tcp = parseConntrackLine(TCP);
    assert.equal(tcp?.protocol, "tcp");
    assert.equal(tcp?.orig.sport, 40053);
  });

  test("[UNREPLIED] marks a flow still waiting for its reply; the other flags are dropped", () => {
    assert.equal(parseConntrackLine(ASSURED_ZONE)?.unreplied, true);
    const answered = parseConntrackLine(ASSURED_ZONE.replace("[UNREPLIED] ", ""));
    assert.ok(answered);
    assert.equal("unreplied" in answered, false);
  });

  test("IPv6 addresses come back in canonical text", () => {
    assert.deepEqual(parseConntrackLine(IPV6)?.orig, {
      src: "fd00::3",
      dst: "fd00:30::53",
      sport: 40053,
      dport: 80,
    });
    const long = IPV6.replace("dst=fd00:30::53", "dst=FD00:30:0:0:0:0:0:53");
    assert.equal(parseConntrackLine(long)?.orig.dst, "fd00:30::53");
  });

  test("a listing: several lines, blank lines and lines without two tuples", () => {
    const flows = parseConntrackList(
      `${UNREPLIED}\n${ASSURED_ZONE}\n\nicmp 1 29 src=10.0.0.1 dst=10.0.0.2 type=8\n`,
    );
    assert.deepEqual(
      flows.map((f) => f.orig.sport),
      [40053, 40054],
    );
    // An empty table: nothing on stdout (the "0 flow entries have been shown." goes to stderr).
    assert.deepEqual(parseConntrackList(""), []);
    assert.equal(
      parseConntrackLine("conntrack v1.4.7 (conntrack-tools): 2 flow entries have been shown."),
      undefined,
    );
  });

  test("flowKey tells entries apart by both tuples", () => {
    const a = parseConntrackLine(UNREPLIED);
    const b = parseConntrackLine(UNREPLIED.replace("src=10.180.0.1", "src=10.180.0.9"));
    assert.ok(a && b);
    assert.notEqual(flowKey(a), flowKey(b));
    assert.equal(flowKey(a), flowKey({ ...a }));
  });
});
