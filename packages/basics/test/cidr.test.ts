import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  cidrContains,
  cidrContainsText,
  cidrList,
  formatCIDR,
  goCIDRContains,
  parseCIDR,
  parseGoCIDR,
  parseGoIP,
  parseIP,
} from "../src/index.js";

describe("parseCIDR: kube-proxy's reading (ParseCIDRSloppy, one family each)", () => {
  test("masked, printed as Go's IPNet.String()", () => {
    const cases: [string, string | null][] = [
      ["10.1.2.3/8", "10.0.0.0/8"],
      ["010.1.2.3/16", "10.1.0.0/16"],
      [" 203.0.113.0/25 ", "203.0.113.0/25"],
      ["FD00:10:96::1/112", "fd00:10:96::/112"],
      ["0.0.0.0/0", "0.0.0.0/0"],
      ["::/0", "::/0"],
      ["10.0.0.0/33", null],
      ["fd00::/129", null],
      ["10.0.0.0/0008", null],
      ["::ffff:10.0.0.0/104", null],
      ["10.0.0.0", null],
      ["10.0.0.0/8/8", null],
      ["example.org/32", null],
    ];
    for (const [text, want] of cases) {
      const cidr = parseCIDR(text);
      assert.equal(cidr && formatCIDR(cidr), want, text);
    }
  });

  test("cidrContains: same family, same leading bits", () => {
    const net = parseCIDR("10.96.0.0/12");
    assert.ok(net);
    assert.ok(cidrContains(net, parseIP("10.111.255.255") ?? assert.fail()));
    assert.ok(!cidrContains(net, parseIP("10.112.0.0") ?? assert.fail()));
    assert.ok(cidrContains(net, parseIP("::ffff:10.96.0.1") ?? assert.fail()), "a mapped address is IPv4");
    const all6 = parseCIDR("::/0");
    assert.ok(all6 && !cidrContains(all6, parseIP("10.0.0.1") ?? assert.fail()), "never the other family");
  });

  test("cidrContainsText: false when either does not parse", () => {
    assert.ok(cidrContainsText("fd00:10:244::/56", "fd00:10:244:ff::9"));
    assert.ok(!cidrContainsText("fd00:10:244::/56", "10.244.0.1"));
    assert.ok(cidrContainsText("127.0.0.0/8", "127.1.2.3"));
    assert.ok(!cidrContainsText("127.0.0.0/8", "localhost"));
    assert.ok(!cidrContainsText("127.0.0.0/88", "127.0.0.1"));
  });
});

describe("parseGoCIDR: Go's net.ParseCIDR, as CoreDNS's ACLs read nets", () => {
  test("what Go refuses", () => {
    for (const bad of [
      "10.0.0.0/33",
      "010.0.0.0/8",
      "10.0.0.0",
      "fd00::/129",
      "fd00::1%lo0/64",
      "10.0.0.0/x",
    ])
      assert.equal(parseGoCIDR(bad), undefined, bad);
  });

  test("both families in 16 bytes; IPv4 prefixes count from bit 96", () => {
    const net = parseGoCIDR("10.1.2.3/8");
    assert.equal(net?.bits, 104);
    assert.ok(net && goCIDRContains(net, parseGoIP("10.200.0.1") ?? assert.fail()));
    assert.ok(net && !goCIDRContains(net, parseGoIP("11.0.0.1") ?? assert.fail()));
    const v6 = parseGoCIDR("2001:db8::/127");
    assert.ok(v6 && goCIDRContains(v6, parseGoIP("2001:db8::1") ?? assert.fail()));
    assert.ok(v6 && !goCIDRContains(v6, parseGoIP("2001:db8::2") ?? assert.fail()));
    // Written with a colon, an IPv4 network takes an IPv6 prefix length, as in Go.
    const mapped = parseGoCIDR("::ffff:10.0.0.0/104");
    assert.equal(mapped?.bits, 104);
    assert.ok(mapped && goCIDRContains(mapped, parseGoIP("10.9.9.9") ?? assert.fail()));
  });
});

test("cidrList: a flag's comma-separated CIDRs, trimmed, in order", () => {
  assert.deepEqual(cidrList("10.96.0.0/16, fd00:10:96::/112,"), ["10.96.0.0/16", "fd00:10:96::/112"]);
  assert.deepEqual(cidrList(""), []);
});
