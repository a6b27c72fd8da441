import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Metrics } from "../../src/metrics/metrics.js";
import { Resolver } from "../../src/resolver.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery } from "../../src/wire/message.js";
import { formatRecord } from "../../src/wire/presentation.js";
import { askFast, askFull, chainOf } from "../helpers/chain.js";
import { staticZone } from "../helpers/static-zone.js";

const SOA = (owner: string) => `${owner} 604800 IN SOA localhost. root.localhost. 1 0 0 0 604800`;
const show = (m: Message | undefined) => ({
  rcode: m?.rcode,
  answer: (m?.answer ?? []).map(formatRecord),
  authority: (m?.authority ?? []).map(formatRecord),
});
const backend = () =>
  staticZone(["localhost.example.net. 60 IN A 192.0.2.1", "a.example.org. 60 IN A 192.0.2.2"]);

describe("local", () => {
  test("upstream's table of local answers", async () => {
    const { sites } = chainOf(" local", backend());
    const cases: [string, number, number, string[], string[]][] = [
      ["localhost.", 1, 0, ["localhost. 604800 IN A 127.0.0.1"], []],
      ["localHOst.", 1, 0, ["localHOst. 604800 IN A 127.0.0.1"], []],
      ["localhost.", 28, 0, ["localhost. 604800 IN AAAA ::1"], []],
      ["localhost.", 2, 0, ["localhost. 604800 IN NS localhost."], []],
      ["localhost.", 6, 0, [SOA("localhost.")], []],
      ["localhost.", 15, 0, [], [SOA("localhost.")]],
      ["127.in-addr.arpa.", 1, 0, [], [SOA("127.in-addr.arpa.")]],
      ["a.localhost.", 1, 0, ["a.localhost. 604800 IN A 127.0.0.1"], []],
      ["a.localhost.", 28, 0, ["a.localhost. 604800 IN AAAA ::1"], []],
      ["a.localhost.", 15, 0, [], [SOA("a.localhost.")]],
      ["1.0.0.127.in-addr.arpa.", 12, 0, ["1.0.0.127.in-addr.arpa. 604800 IN PTR localhost."], []],
      ["1.0.0.127.in-addr.arpa.", 15, 0, [], [SOA("127.in-addr.arpa.")]],
      ["2.0.0.127.IN-ADDR.arpa.", 12, 3, [], [SOA("127.IN-ADDR.arpa.")]],
      ["9.0.in-addr.arpa.", 12, 3, [], [SOA("0.in-addr.arpa.")]],
      ["localhost.example.net.", 1, 0, ["localhost.example.net. 604800 IN A 127.0.0.1"], []],
    ];
    for (const [name, type, rcode, answer, authority] of cases)
      assert.deepEqual(show(await askFull(sites, newQuery(name, type))), { rcode, answer, authority }, name);
  });

  test("other names go on; localhost_prefix off leaves localhost.<domain> to the next plugin", async () => {
    const { sites } = chainOf(" local {\n  localhost_prefix off\n }", backend());
    assert.deepEqual(show(await askFull(sites, newQuery("localhost.example.net.", 1))).answer, [
      "localhost.example.net. 60 IN A 192.0.2.1",
    ]);
    assert.equal((await askFull(sites, newQuery("x.localhost.", 1)))?.answer[0]?.data, "127.0.0.1");
  });

  test("the counter counts non-apex localhost names only", async () => {
    const metrics = new Metrics();
    const { sites } = chainOf(" local", backend(), metrics);
    for (const name of ["localhost.", "a.localhost.", "localhost.example.net.", "a.example.org."])
      await askFull(sites, newQuery(name, 1));
    const text = await metrics.registry.metrics();
    assert.match(
      text,
      /# HELP coredns_local_localhost_requests_total Counter of special localhost subdomain requests\./,
    );
    assert.match(text, /^coredns_local_localhost_requests_total 2$/m);
  });

  test("with cache behind it, local names take the full path and other hits come from wire", async () => {
    const { sites } = chainOf(" local\n cache", backend());
    const other = newQuery("a.example.org.", 1, 7);
    await askFull(sites, other);
    assert.equal(askFast(sites, other)?.answer[0]?.data, "192.0.2.2");
    const local = newQuery("a.localhost.", 1, 8);
    await askFull(sites, local);
    assert.equal(askFast(sites, local), undefined);
  });

  test("setup errors in upstream's wording", () => {
    const cases: [string, RegExp][] = [
      ["local x", /plugin\/local: Corefile:2 - .*Wrong argument count or unexpected line ending after 'x'$/],
      ["local {\n  foo\n }", /plugin\/local: Corefile:3 - .*unknown property 'foo'$/],
      [
        "local {\n  localhost_prefix maybe\n }",
        /plugin\/local: \S+:\d+ - Error during parsing: localhost_prefix expects 'on' or 'off', got "maybe"$/,
      ],
      [
        "local {\n  localhost_prefix\n }",
        /plugin\/local: \S+:\d+ - Error during parsing: Wrong argument count .* after 'localhost_prefix'$/,
      ],
      ["local\n local x", /Corefile:3 - .*after 'x'$/],
    ];
    for (const [body, message] of cases)
      assert.throws(() => Resolver.fromCorefile(`.:0 {\n ${body}\n}\n`, { file: "Corefile" }), message, body);
  });
});
