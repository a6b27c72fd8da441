import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Metrics } from "../../src/metrics/metrics.js";
import type { Peer } from "../../src/plugin/handler.js";
import { Resolver } from "../../src/resolver.js";
import { newQuery } from "../../src/wire/message.js";
import { askFull, chainOf } from "../helpers/chain.js";
import { staticZone } from "../helpers/static-zone.js";

const peer = (address: string): Peer => ({
  address,
  port: 5300,
  family: address.includes(":") ? "IPv6" : "IPv4",
});
const backend = () =>
  staticZone(["a.example.org. 60 IN A 192.0.2.1", "a.example.org. 60 IN AAAA 2001:db8::1"]);
const ednsQuery = (name: string, qtype: number) => ({
  ...newQuery(name, qtype),
  edns: { udpSize: 1232, version: 0, dnssecOk: false, options: [] },
});

describe("acl", () => {
  test("first matching policy of the first matching rule decides; allow stops the search", async () => {
    const { sites } = chainOf(
      ` acl example.org {
    allow net 10.0.0.0/8
    block type AAAA
    filter type A net 192.168.0.0/16
    drop net 2001:db8::/32 192.0.2.7
  }
  acl {
    block
  }`,
      backend(),
    );
    const ask = async (address: string, qtype: number) =>
      (await askFull(sites, ednsQuery("a.example.org.", qtype), peer(address)))?.rcode ?? "none";
    assert.equal(
      await ask("10.1.2.3", 28),
      0,
      "allowed before the block line, and the second rule is skipped",
    );
    assert.equal(await ask("172.16.0.1", 28), 5);
    const filtered = await askFull(sites, ednsQuery("a.example.org.", 1), peer("192.168.1.1"));
    assert.equal(filtered?.rcode, 0);
    assert.deepEqual(filtered?.answer, []);
    assert.deepEqual(filtered?.edns?.options, [{ code: 15, data: Buffer.from([0, 17]) }]);
    assert.equal(await ask("2001:db8::5", 1), "none");
    assert.equal(await ask("192.0.2.7", 1), "none");
    // No policy of the first rule matches, so the catch-all second one blocks.
    assert.equal(await ask("172.16.0.1", 1), 5);
    const blocked = await askFull(sites, ednsQuery("a.example.org.", 28), peer("172.16.0.1"));
    assert.deepEqual(blocked?.edns?.options, [{ code: 15, data: Buffer.from([0, 15]) }]);
    assert.equal(blocked?.edns?.dnssecOk, true, "upstream's SetEdns0(4096, true) leaves DO set");
  });

  test("names outside a rule's zones are not judged by it", async () => {
    const { sites } = chainOf(" acl other.org {\n    block\n  }", backend());
    assert.equal((await askFull(sites, newQuery("a.example.org.", 1)))?.rcode, 0);
    assert.equal((await askFull(sites, newQuery("x.other.org.", 1)))?.rcode, 5);
  });

  test("* ends a section, and an IPv4-mapped client address counts as IPv4", async () => {
    const { sites } = chainOf(" acl {\n    block type MX * BOGUS net 127.0.0.0/8 * nonsense\n  }", backend());
    assert.equal((await askFull(sites, newQuery("a.example.org.", 1), peer("::ffff:127.0.0.1")))?.rcode, 5);
    assert.equal((await askFull(sites, newQuery("a.example.org.", 1), peer("::1")))?.rcode, 5);
  });

  test("counts each outcome under upstream's names and labels", async () => {
    const metrics = new Metrics();
    const { sites } = chainOf(
      " acl {\n    allow net 10.0.0.0/8\n    drop net 192.0.2.0/24\n    filter type AAAA\n    block\n  }",
      backend(),
      metrics,
    );
    for (const [address, qtype] of [
      ["10.0.0.1", 1],
      ["192.0.2.1", 1],
      ["172.16.0.1", 28],
      ["172.16.0.1", 1],
    ] as const)
      await askFull(sites, newQuery("a.example.org.", qtype), peer(address));
    const text = await metrics.registry.metrics();
    for (const line of [
      'coredns_acl_allowed_requests_total{server="dns://:53",view=""} 1',
      'coredns_acl_dropped_requests_total{server="dns://:53",zone=".",view=""} 1',
      'coredns_acl_filtered_requests_total{server="dns://:53",zone=".",view=""} 1',
      'coredns_acl_blocked_requests_total{server="dns://:53",zone=".",view=""} 1',
      "# HELP coredns_acl_blocked_requests_total Counter of DNS requests being blocked.",
    ])
      assert.ok(text.includes(line), line);
  });

  test("setup errors in upstream's wording", () => {
    const cases: [string, RegExp][] = [
      [
        "acl {\n  permit\n }",
        /plugin\/acl: Corefile:3 - Error during parsing: unexpected token "permit"; expect 'allow', 'block', 'filter' or 'drop'$/,
      ],
      ["acl {\n  allow from 1.2.3.4\n }", /Corefile:3 - .*unexpected token "from"; expect 'type \| net'$/],
      ["acl {\n  allow type\n }", /Corefile:3 - .*no token specified in "type" section$/],
      ["acl {\n  allow NET\n }", /no token specified in "net" section$/],
      ["acl {\n  allow type a\n }", /unexpected token "a"; expect legal QTYPE$/],
      ["acl {\n  allow net 10.0.0.0/40\n }", /illegal CIDR notation "10.0.0.0\/40"$/],
      ["acl {\n  allow net example.org\n }", /illegal CIDR notation "example.org\/32"$/],
      ["acl {\n  allow net fe80::zz\n }", /illegal CIDR notation "fe80::zz\/128"$/],
    ];
    for (const [body, message] of cases)
      assert.throws(() => Resolver.fromCorefile(`.:0 {\n ${body}\n}\n`, { file: "Corefile" }), message, body);
  });
});
