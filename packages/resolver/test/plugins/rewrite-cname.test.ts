import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import type { Handler, ResponseWriter, Result } from "../../src/plugin/handler.js";
import { RewriteHandler } from "../../src/plugins/rewrite/rewrite.js";
import type { Upstream } from "../../src/plugins/rewrite/rule.js";
import { parseRewrite } from "../../src/plugins/rewrite/setup.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { formatRecord, parseRecord } from "../../src/wire/presentation.js";

const remote = { address: "127.0.0.1", port: 1, family: "IPv4" as const };

function rules(body: string) {
  const [block] = parseCorefile(`.:53 {\n${body}\n}\n`, { env: {} });
  assert.ok(block);
  return parseRewrite(block.stanzas.filter((s) => s.name === "rewrite"));
}

/** `a.test` is a CNAME chain a.test -> b.up.test -> c.up.test with c's address; anything else one A. */
const backend: Handler = {
  name: "backend",
  async serveDNS(_c, w, r): Promise<Result> {
    const q = r.question[0];
    assert.ok(q);
    const reply = replyTo(r);
    reply.answer =
      q.name === "a.test."
        ? [
            parseRecord("a.test. 300 IN CNAME b.up.test."),
            parseRecord("b.up.test. 300 IN CNAME c.up.test."),
            parseRecord("c.up.test. 300 IN A 192.0.2.3"),
          ]
        : [parseRecord(`${q.name} 300 IN A 192.0.2.1`)];
    w.write(reply);
    return { rcode: 0 };
  },
};

/** Resolves every name to one A record (TC set for names under `tc.`) and records what it was asked. */
function upstream(asked: string[]): Upstream {
  return async (name, qtype) => {
    asked.push(`${name}/${qtype}`);
    const reply = replyTo(newQuery(name, qtype));
    reply.answer = [parseRecord(`${name} 60 IN A 198.51.100.1`)];
    reply.tc = name.startsWith("tc.");
    return reply;
  };
}

async function ask(body: string, name = "a.test.", type = 1) {
  const asked: string[] = [];
  const handler = new RewriteHandler(backend, rules(body), upstream(asked));
  let written: Message | undefined;
  const w: ResponseWriter = { transport: "udp", remote, write: (m) => (written = m) };
  await handler.serveDNS({ zone: ".", server: "dns://:53" }, w, newQuery(name, type));
  return { answer: (written?.answer ?? []).map(formatRecord), tc: written?.tc, asked };
}

describe("rewrite cname", () => {
  test("exact: the target is swapped and resolved again; the chain after it is dropped", async () => {
    const { answer, asked } = await ask("rewrite cname exact B.up.test other.test");
    assert.deepEqual(asked, ["other.test./1"]);
    assert.deepEqual(answer, ["a.test. 300 IN CNAME other.test.", "other.test. 60 IN A 198.51.100.1"]);
  });

  test("suffix: names are not made absolute, so the FROM must end in the dot to match", async () => {
    const dotted = await ask("rewrite cname suffix .up.test. .down.test.");
    // The second CNAME, dropped from the answer by then, still has its turn: the answer is rebuilt from the
    // CNAMEs left (none points at it) and the second lookup, as upstream does.
    assert.deepEqual(dotted.asked, ["b.down.test./1", "c.down.test./1"]);
    assert.deepEqual(dotted.answer, [
      "a.test. 300 IN CNAME b.down.test.",
      "c.down.test. 60 IN A 198.51.100.1",
    ]);
    const bare = await ask("rewrite cname suffix .up.test .down.test");
    assert.deepEqual(bare.asked, []);
    assert.equal(bare.answer.length, 3);
  });

  test("prefix, substring and regex", async () => {
    assert.deepEqual((await ask("rewrite cname prefix b. x.")).asked, ["x.up.test./1"]);
    assert.deepEqual((await ask("rewrite cname substring up down")).asked, [
      "b.down.test./1",
      "c.down.test./1",
    ]);
    const regex = await ask("rewrite cname regex ^C\\.(.*)$ z.{1}");
    assert.deepEqual(regex.asked, ["z.up.test./1"]);
    assert.deepEqual(regex.answer, [
      "a.test. 300 IN CNAME b.up.test.",
      "b.up.test. 300 IN CNAME z.up.test.",
      "z.up.test. 60 IN A 198.51.100.1",
    ]);
  });

  test("the lookup's TC bit is the reply's, and its type is the (rewritten) question's", async () => {
    const { tc, asked } = await ask(
      "rewrite continue type AAAA A\nrewrite cname exact c.up.test tc.test",
      "a.test.",
      28,
    );
    assert.equal(tc, true);
    assert.deepEqual(asked, ["tc.test./1"]);
  });

  test("a cname rule stops the list: rules after it never run", async () => {
    const { answer } = await ask("rewrite cname exact nothing.test x.test\nrewrite name exact a.test z.test");
    assert.equal(answer[0], "a.test. 300 IN CNAME b.up.test.");
  });

  test("replies without a matching CNAME are left alone", async () => {
    const { answer, asked } = await ask("rewrite cname exact b.up.test other.test", "plain.test.");
    assert.deepEqual(asked, []);
    assert.deepEqual(answer, ["plain.test. 300 IN A 192.0.2.1"]);
  });
});

describe("rewrite cname setup errors", () => {
  const cases: [string, string][] = [
    ["rewrite cname a.", "too few (1) arguments for a cname rule"],
    ["rewrite cname exact a. b. c.", "too few (4) arguments for a cname rule"],
    ["rewrite cname fuzzy a. b.", "unknown cname rewrite type: fuzzy"],
    [
      "rewrite cname regex ( b",
      "invalid cname rewrite regex pattern: error parsing regexp: missing closing ): `(`",
    ],
    [`rewrite cname regex ${"a".repeat(10001)} b`, "regex pattern too long in a cname rule: 10001 > 10000"],
  ];
  for (const [line, message] of cases) {
    test(line.slice(0, 40), () => {
      assert.throws(
        () => rules(`whoami\n${line}`),
        (err: Error) => err.message === `plugin/rewrite: ${message}`,
      );
    });
  }
});
