import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Handler, Result } from "../../src/plugin/handler.js";
import { Resolver } from "../../src/resolver.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { parseRecord } from "../../src/wire/presentation.js";
import { askFast, askFull, chainOf } from "../helpers/chain.js";

/** Echoes the RD it was asked with into an answer, `fail.*` writes nothing; its fast path must stay unused. */
function backend(seen: Message[] = []): Handler {
  return {
    name: "backend",
    answerFromWire: () => assert.fail("answered from wire behind header"),
    async serveDNS(_c, w, r): Promise<Result> {
      seen.push(structuredClone(r));
      if (r.question[0]?.name.startsWith("fail.")) return { rcode: 2 };
      const reply = replyTo(r);
      reply.answer = [parseRecord(`${r.question[0]?.name} 60 IN A 192.0.2.1`)];
      w.write(reply);
      return { rcode: 0 };
    },
  };
}

const flags = (m: Message | undefined) => ({ aa: m?.aa, ra: m?.ra, rd: m?.rd });

describe("header", () => {
  test("response rules set and clear flags, in order, on every written reply", async () => {
    const { sites } = chainOf(" header {\n  response set aa ra rd\n  response clear rd\n }", backend());
    const q = { ...newQuery("a.example.org.", 1), rd: false };
    assert.deepEqual(flags(await askFull(sites, q)), { aa: true, ra: true, rd: false });
  });

  test("query rules change the request the chain sees, and the server's error reply follows them", async () => {
    const seen: Message[] = [];
    const { sites } = chainOf(" header {\n  query clear rd\n  query set aa\n }", backend(seen));
    const reply = await askFull(sites, newQuery("a.example.org.", 1));
    assert.deepEqual([seen[0]?.rd, seen[0]?.aa, reply?.rd], [false, true, false]);
    const failed = await askFull(sites, newQuery("fail.example.org.", 1));
    assert.deepEqual([failed?.rcode, failed?.rd], [2, false]);
  });

  test("error replies the server writes are not touched by response rules", async () => {
    const { sites } = chainOf(" header {\n  response set aa\n }", backend());
    const failed = await askFull(sites, newQuery("fail.example.org.", 1));
    assert.deepEqual([failed?.rcode, failed?.aa], [2, false]);
  });

  test("a cache in front stores the changed reply; nothing behind header answers from wire", async () => {
    const { sites } = chainOf(" cache\n header {\n  response set aa\n }", backend());
    const q = newQuery("a.example.org.", 1, 5);
    assert.equal(askFast(sites, q), undefined);
    await askFull(sites, q);
    assert.ok(askFast(sites, q));
    const { sites: bare } = chainOf(" header {\n  response set aa\n }", backend());
    assert.equal(askFast(bare, q), undefined);
  });

  test("setup errors in upstream's wording; the first stanza with rules wins", () => {
    const cases: [string, string][] = [
      [
        "header",
        "plugin/header: Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'header'",
      ],
      [
        "header {\n }",
        "plugin/header: Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after '}'",
      ],
      [
        "header {\n  foo\n }",
        "plugin/header: Corefile:3 - Error during parsing: setting up rule: invalid selector=foo should be query or response",
      ],
      [
        "header {\n  response set\n }",
        "plugin/header: setting up rule: invalid length for flags, at least one should be provided",
      ],
      [
        "header {\n  query foo\n }",
        "plugin/header: setting up rule: invalid length for flags, at least one should be provided",
      ],
      [
        "header {\n  query foo rd\n }",
        "plugin/header: setting up rule: unknown flag action=foo, should be set or clear",
      ],
      ["header {\n  query set XX\n }", "plugin/header: setting up rule: unknown/unsupported flag=xx"],
      ["header {\n  response set aa\n  query\n }", "plugin/header: setting up rule: no flag action provided"],
    ];
    for (const [body, message] of cases)
      assert.throws(
        () => Resolver.fromCorefile(`.:0 {\n ${body}\n}\n`, { file: "Corefile" }),
        (err: Error) => err.message.endsWith(message),
        body,
      );
    for (const ok of [
      "header x {\n  RESPONSE SET AA\n }\n header {\n  foo\n }",
      "header\n header {\n  query set rd\n }",
    ])
      assert.doesNotThrow(() => Resolver.fromCorefile(`.:0 {\n ${ok}\n whoami\n}\n`), ok);
  });
});
