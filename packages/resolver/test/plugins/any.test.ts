import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AnyHandler } from "../../src/plugins/any/any.js";
import { Resolver } from "../../src/resolver.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery } from "../../src/wire/message.js";
import { formatRecord } from "../../src/wire/presentation.js";
import { askFast, askFull, chainOf, LOCAL_PEER } from "../helpers/chain.js";
import { staticZone } from "../helpers/static-zone.js";

const zone = () => staticZone(["a.example.org. 300 IN A 192.0.2.1"]);

describe("any", () => {
  test("an ANY query gets the RFC 8482 HINFO, named as asked, without asking the next plugin", async () => {
    const backend = zone();
    let sent: Message | undefined;
    const w = { transport: "udp" as const, remote: LOCAL_PEER, write: (m: Message) => (sent = m) };
    const result = await new AnyHandler(backend).serveDNS(
      { zone: ".", server: "" },
      w,
      newQuery("A.Example.ORG.", 255),
    );
    assert.deepEqual(result, { rcode: 0 });
    assert.equal(backend.seen.length, 0);
    assert.equal(sent?.aa, false);
    // HINFO is kept as opaque rdata: two character-strings, "ANY obsoleted" and "See RFC 8482".
    const rdata = `0d${Buffer.from("ANY obsoleted").toString("hex")}0c${Buffer.from("See RFC 8482").toString("hex")}`;
    assert.deepEqual(sent?.answer.map(formatRecord), [`A.Example.ORG. 8482 IN TYPE13 \\# 27 ${rdata}`]);
  });

  test("other types go to the next plugin unchanged", async () => {
    const { sites } = chainOf(" any", zone());
    const reply = await askFull(sites, newQuery("a.example.org.", 1));
    assert.deepEqual(reply?.answer.map(formatRecord), ["a.example.org. 300 IN A 192.0.2.1"]);
  });

  test("with cache behind it, cache hits still come from wire but ANY never does", async () => {
    const { sites } = chainOf(" any\n cache", zone());
    const a = newQuery("a.example.org.", 1, 9);
    assert.equal(askFast(sites, a), undefined);
    await askFull(sites, a);
    assert.deepEqual(
      askFast(sites, a)?.answer.map((r) => r.data),
      ["192.0.2.1"],
    );
    const any = newQuery("a.example.org.", 255, 10);
    for (let i = 0; i < 2; i++) {
      assert.equal(askFast(sites, any), undefined);
      assert.equal((await askFull(sites, any))?.answer[0]?.type, "TYPE13");
    }
  });

  test("takes no arguments and no block, naming the token found as upstream does", () => {
    const cases: [string, RegExp][] = [
      [
        "any extra",
        /plugin\/any: \S+:\d+ - Error during parsing: Wrong argument count or unexpected line ending after 'extra'$/,
      ],
      [
        "any {\n  foo\n }",
        /plugin\/any: \S+:\d+ - Error during parsing: Unexpected token '\{', expecting argument$/,
      ],
      // An empty block is still a block: caddy hands the braces to the setup as tokens.
      [
        "any {\n }",
        /plugin\/any: Corefile:2 - Error during parsing: Unexpected token '\{', expecting argument$/,
      ],
      [
        "any { }",
        /plugin\/any: Corefile:2 - Error during parsing: Unexpected token '\{', expecting argument$/,
      ],
      ["any {}", /plugin\/any: Corefile:2 - .*after '\{\}'$/],
    ];
    for (const [body, message] of cases)
      assert.throws(() => Resolver.fromCorefile(`.:0 {\n ${body}\n}\n`, { file: "Corefile" }), message);
    assert.doesNotThrow(() => Resolver.fromCorefile(".:0 {\n any\n any extra\n whoami\n}\n"));
  });
});
