import assert from "node:assert/strict";
import { test } from "node:test";
import { cidrContainsText, cidrRange, cidrSize, fromBig, hostPort, nth, toBig } from "../src/index.js";

test("address arithmetic prints IPv6 as Go does", () => {
  assert.equal(nth("fd00:10:96::/112", 10), "fd00:10:96::a");
  assert.equal(nth("fd00::/64", 65536), "fd00::1:0");
  assert.equal(fromBig("IPv6", toBig("fd00:0:0:1:0:0:0:1")), "fd00:0:0:1::1");
  assert.ok(cidrContainsText("fd00:10:244::/56", "fd00:10:244:ff::9"));
  assert.ok(!cidrContainsText("fd00:10:244::/56", "10.244.0.1"));
  assert.equal(hostPort("fd00::1", 443), "[fd00::1]:443");
});

test("toBig and fromBig: an address is a number of 32 or 128 bits", () => {
  assert.equal(toBig("10.0.0.1"), 0x0a000001n);
  assert.equal(toBig("::1"), 1n);
  assert.equal(fromBig("IPv4", 0xc0a80001n), "192.168.0.1");
  assert.equal(fromBig("IPv6", 1n << 112n), "1::");
  assert.throws(() => toBig("10.0.0"), /^Error: not an IP address: 10\.0\.0$/);
});

test("cidrRange and cidrSize: the network address as a number, and how many there are", () => {
  assert.deepEqual(cidrRange("10.244.1.7/24"), { family: "IPv4", base: 0x0af40100n, bits: 24 });
  assert.equal(cidrSize(cidrRange("10.244.1.0/24")), 256n);
  assert.equal(cidrSize(cidrRange("fd00:10:244:1::/64")), 1n << 64n);
  assert.throws(() => cidrRange("198.18.0.0/33"), /^Error: not a CIDR: 198\.18\.0\.0\/33$/);
  assert.throws(() => cidrRange("198.18.0/24"), /not a CIDR/);
});

test("nth: from the network address; past the end is an error", () => {
  assert.equal(nth("10.96.0.0/12", 10), "10.96.0.10");
  assert.equal(nth("10.96.0.0/30", 3), "10.96.0.3");
  assert.throws(() => nth("10.96.0.0/30", 4), /^Error: 10\.96\.0\.0\/30 has no address number 4$/);
  assert.throws(() => nth("10.96.0.0/30", -1), /has no address number -1/);
});
