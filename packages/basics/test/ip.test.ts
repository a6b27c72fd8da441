import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  familyOf,
  formatIP,
  formatIPv6,
  goIPString,
  hostPort,
  ipFamilyOf,
  isIPv4Mapped,
  normalizeIP,
  parseGoIP,
  parseIP,
  writeIPv4,
  writeIPv6,
} from "../src/index.js";

const hex = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString("hex"));

describe("writeIPv4 and writeIPv6: the grammar, in place", () => {
  test("a dotted quad at an offset; leading zeros decimal when sloppy, refused when strict", () => {
    const out = new Uint8Array(6);
    assert.ok(writeIPv4(out, 1, "10.0.255.1", "strict"));
    assert.equal(hex(out), "000a00ff0100");
    assert.ok(writeIPv4(out, 0, "010.000.000.001", "sloppy"));
    assert.equal(hex(out.subarray(0, 4)), "0a000001");
    for (const bad of ["010.0.0.1", "1.2.3.00"]) assert.equal(writeIPv4(out, 0, bad, "strict"), false, bad);
    for (const bad of ["1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.0004", "1..2.3", "1.2.3.4 ", "+1.2.3.4", ""])
      assert.equal(writeIPv4(out, 0, bad, "sloppy"), false, bad);
  });

  test("IPv6 in Go's grammar: one `::` for at least one group, a dotted tail in the last four bytes", () => {
    const cases: [string, string][] = [
      ["::", "00000000000000000000000000000000"],
      ["::1", "00000000000000000000000000000001"],
      ["1::", "00010000000000000000000000000000"],
      ["1:2:3:4:5:6:7::", "00010002000300040005000600070000"],
      ["::1:2:3:4:5:6:7", "00000001000200030004000500060007"],
      ["FD00:0000::0001", "fd000000000000000000000000000001"],
      ["::ffff:1.2.3.4", "00000000000000000000ffff01020304"],
      ["1:2:3:4:5:6:1.2.3.4", "00010002000300040005000601020304"],
      ["1::1.2.3.4", "00010000000000000000000001020304"],
    ];
    for (const [text, want] of cases) {
      // Scratch space full of garbage: every byte must be written.
      const out = new Uint8Array(18).fill(0xaa);
      assert.ok(writeIPv6(out, 1, text, "strict"), text);
      assert.equal(hex(out.subarray(1, 17)), want, text);
      assert.equal(out[0], 0xaa, `${text}: nothing before the offset`);
      assert.equal(out[17], 0xaa, `${text}: nothing after the 16 bytes`);
    }
    const out = new Uint8Array(16);
    for (const bad of [
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7:8::",
      "::1:2:3:4:5:6:7:8",
      "1::2::3",
      "12345::",
      ":::",
      "1:::2",
      ":1::",
      "1::2:",
      "1:2:3:4:5:6:7",
      "1.2.3.4::",
      "1.2.3.4::1",
      "1:2:3:4:5:6:7:1.2.3.4",
      "::a.2.3.4",
      "fe80::1%lo0",
      "",
    ])
      assert.equal(writeIPv6(out, 0, bad, "sloppy"), false, bad);
    assert.ok(writeIPv6(out, 0, "::ffff:01.2.3.4", "sloppy"));
    assert.equal(writeIPv6(out, 0, "::ffff:01.2.3.4", "strict"), false);
  });
});

describe("parseIP: k8s.io/utils/net ParseIPSloppy", () => {
  // What the EndpointSlice controller canonicalises Pod and Endpoints addresses to.
  const cases: [string, { family: string; address: string } | null][] = [
    ["10.0.0.1", { family: "IPv4", address: "10.0.0.1" }],
    ["010.000.000.001", { family: "IPv4", address: "10.0.0.1" }],
    ["FD00:0000::0001", { family: "IPv6", address: "fd00::1" }],
    ["::ffff:10.0.0.1", { family: "IPv4", address: "10.0.0.1" }],
    ["::FFFF:0a00:1", { family: "IPv4", address: "10.0.0.1" }],
    ["::1.2.3.4", { family: "IPv6", address: "::102:304" }],
    [" 10.0.0.1 ", { family: "IPv4", address: "10.0.0.1" }],
    ["256.0.0.1", null],
    ["fe80::1%eth0", null],
    ["pod", null],
  ];
  for (const [text, want] of cases)
    test(JSON.stringify(text), () => {
      const ip = parseIP(text);
      assert.deepEqual(ip && { family: ip.family, address: formatIP(ip) }, want);
    });

  test("an IPv4 address is 4 bytes, also when written mapped", () => {
    assert.equal(parseIP("::ffff:1.2.3.4")?.bytes.length, 4);
    assert.equal(parseIP("fd00::1")?.bytes.length, 16);
  });
});

describe("parseGoIP: Go's net.ParseIP", () => {
  test("16 bytes, IPv4 in its mapped form", () => {
    assert.equal(hex(parseGoIP("10.0.0.1")), "00000000000000000000ffff0a000001");
    assert.equal(goIPString(parseGoIP("::FFFF:10.0.0.2") as Uint8Array), "10.0.0.2");
    assert.equal(goIPString(parseGoIP("fe80:0000:0000:0000:0000:0000:0000:0001") as Uint8Array), "fe80::1");
    assert.equal(goIPString(parseGoIP("::1.2.3.4") as Uint8Array), "::102:304");
  });

  test("what Go refuses: leading zeros (Go 1.17 on), zones, bad groups", () => {
    for (const bad of [
      "010.0.0.1",
      "1.2.3",
      "256.1.1.1",
      "1::2::3",
      "12345::",
      "fe80::1%lo0",
      "1:2:3:4:5:6:7:8::",
      "1.2.3.4:80",
      "%",
      "",
    ])
      assert.equal(parseGoIP(bad), undefined, bad);
  });

  test("isIPv4Mapped is Go's To4() != nil", () => {
    assert.ok(isIPv4Mapped(parseGoIP("10.0.0.1") as Uint8Array));
    assert.ok(isIPv4Mapped(parseGoIP("::ffff:10.0.0.1") as Uint8Array));
    assert.ok(!isIPv4Mapped(parseGoIP("::10.0.0.1") as Uint8Array));
    assert.ok(!isIPv4Mapped(parseGoIP("fd00::1") as Uint8Array));
  });
});

describe("printing as Go prints", () => {
  test("formatIPv6: RFC 5952, the longest run of two or more zero groups, the first of equals", () => {
    const cases: [string, string][] = [
      ["00000000000000000000000000000000", "::"],
      ["00000000000000000000000000000001", "::1"],
      ["20010db8000000000000000000000001", "2001:db8::1"],
      ["20010db8000000010000000000000001", "2001:db8:0:1::1"],
      ["20010db8000000000001000000000001", "2001:db8::1:0:0:1"],
      ["20010db8000100010001000100010001", "2001:db8:1:1:1:1:1:1"],
      ["20010db8000000010001000100010001", "2001:db8:0:1:1:1:1:1"],
      ["fd000000000000000000000000010000", "fd00::1:0"],
      ["FD00000000000000000000000000ABCD".toLowerCase(), "fd00::abcd"],
    ];
    for (const [bytes, want] of cases) assert.equal(formatIPv6(Buffer.from(bytes, "hex")), want, bytes);
    const at = Buffer.from(`ffff${cases[2]?.[0]}`, "hex");
    assert.equal(formatIPv6(at, 2), "2001:db8::1", "from an offset");
  });

  test("formatIP and goIPString", () => {
    assert.equal(formatIP({ family: "IPv4", bytes: Uint8Array.of(10, 96, 0, 1) }), "10.96.0.1");
    assert.equal(
      formatIP({ family: "IPv6", bytes: Buffer.from("fd000000000000000000000000000001", "hex") }),
      "fd00::1",
    );
    assert.equal(goIPString(Buffer.from("00000000000000000000ffff0a600001", "hex")), "10.96.0.1");
    assert.equal(goIPString(Buffer.from("00000000000000000000000000000001", "hex")), "::1");
  });

  test("normalizeIP and ipFamilyOf read as parseIP does; familyOf only looks for a colon", () => {
    assert.equal(normalizeIP("FD00:0:0::1"), "fd00::1");
    assert.equal(normalizeIP("010.1.2.3"), "10.1.2.3");
    assert.equal(normalizeIP("nope"), null);
    assert.equal(ipFamilyOf("::ffff:1.2.3.4"), "IPv4");
    assert.equal(ipFamilyOf("fd00::1"), "IPv6");
    assert.equal(ipFamilyOf("fd00::g"), null);
    assert.equal(familyOf("fd00::g"), "IPv6");
    assert.equal(familyOf("10.0.0.1"), "IPv4");
  });

  test("hostPort brackets IPv6, as Go's net.JoinHostPort", () => {
    assert.equal(hostPort("fd00::1", 443), "[fd00::1]:443");
    assert.equal(hostPort("10.0.0.1", "53"), "10.0.0.1:53");
  });
});
