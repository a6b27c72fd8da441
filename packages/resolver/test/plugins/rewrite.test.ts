import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { buildConfig } from "../../src/plugin/build.js";
import type { Handler, ResponseWriter, Result } from "../../src/plugin/handler.js";
import type { Setup } from "../../src/plugin/setup.js";
import { parseRule } from "../../src/plugins/rewrite/parse.js";
import { RewriteHandler } from "../../src/plugins/rewrite/rewrite.js";
import { parseRewrite } from "../../src/plugins/rewrite/setup.js";
import { parseTtlRange } from "../../src/plugins/rewrite/ttl.js";
import { defaultRegistry } from "../../src/registry.js";
import { dispatch } from "../../src/server/dispatch.js";
import { answerFast } from "../../src/server/fast-path.js";
import { decodeMessage } from "../../src/wire/decode.js";
import { encodeMessage } from "../../src/wire/encode.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { formatRecord, parseRecord } from "../../src/wire/presentation.js";

const ctx = { zone: ".", server: "dns://:53" };
const remote = { address: "127.0.0.1", port: 1, family: "IPv4" as const };

/** The rules of a Corefile body such as `rewrite name a b`, as the rewrite setup parses them. */
function rules(body: string) {
  const [block] = parseCorefile(`.:53 {\n${body}\n}\n`, { env: {} });
  assert.ok(block);
  return parseRewrite(block.stanzas.filter((s) => s.name === "rewrite"));
}

/**
 * A backend that answers every question with records owned by the name it was asked: an A record, or a
 * CNAME to `target.<name>` for names starting `cname.`; `nx.*` is NXDOMAIN, `fail.*` writes nothing.
 */
function backend(seen: Message[] = []): Handler {
  return {
    name: "backend",
    async serveDNS(_c, w, r): Promise<Result> {
      seen.push(structuredClone(r));
      const q = r.question[0];
      assert.ok(q);
      if (q.name.startsWith("fail.")) return { rcode: 2 };
      const reply = replyTo(r, q.name.startsWith("nx.") ? 3 : 0);
      if (q.name.startsWith("cname.")) {
        reply.answer = [parseRecord(`${q.name} 300 IN CNAME target.${q.name.slice(6)}`)];
      } else if (!q.name.startsWith("nx.")) {
        reply.answer = [parseRecord(`${q.name} 300 IN A 192.0.2.1`)];
      }
      w.write(reply);
      return { rcode: reply.rcode };
    },
  };
}

/** Runs one query through `rewrite` (the given Corefile lines) and the backend. */
async function ask(body: string, name: string, type = 1, seen: Message[] = []) {
  const handler = new RewriteHandler(backend(seen), rules(body));
  let written: Message | undefined;
  const w: ResponseWriter = { transport: "udp", remote, write: (m) => (written = m) };
  const result = await handler.serveDNS(ctx, w, newQuery(name, type));
  return { result, reply: written, asked: seen.at(-1)?.question[0] };
}

const answers = (m: Message | undefined) => (m?.answer ?? []).map(formatRecord);

describe("rewrite name rules", () => {
  test("exact: the backend sees the new name; the client gets its own question and names back", async () => {
    const { reply, asked } = await ask("rewrite name a.example.org b.example.net", "A.Example.Org.");
    assert.equal(asked?.name, "b.example.net.");
    assert.deepEqual(reply?.question, [{ name: "A.Example.Org.", type: 1, class: 1 }]);
    assert.deepEqual(answers(reply), ["a.example.org. 300 IN A 192.0.2.1"]);
  });

  test("exact names must match the whole name", async () => {
    const { asked } = await ask("rewrite name exact a.example.org b.example.net", "x.a.example.org.");
    assert.equal(asked?.name, "x.a.example.org.");
  });

  test("prefix: FROM and TO are names, so the prefix ends in a dot", async () => {
    assert.equal(
      (await ask("rewrite name prefix www api", "www.example.org.")).asked?.name,
      "api.example.org.",
    );
    assert.equal(
      (await ask("rewrite name prefix www api", "wwwx.example.org.")).asked?.name,
      "wwwx.example.org.",
    );
  });

  test("prefix without answer auto leaves the answer names as the backend wrote them", async () => {
    const plain = await ask("rewrite name prefix www api", "www.example.org.");
    assert.deepEqual(answers(plain.reply), ["api.example.org. 300 IN A 192.0.2.1"]);
    assert.equal(plain.reply?.question[0]?.name, "www.example.org.");
    const auto = await ask("rewrite name prefix www api answer auto", "www.example.org.");
    assert.deepEqual(answers(auto.reply), ["www.example.org. 300 IN A 192.0.2.1"]);
  });

  test("suffix with answer auto swaps the suffix back in owner names and CNAME targets", async () => {
    const { reply, asked } = await ask(
      "rewrite name suffix .corp.example. .svc.local. answer auto",
      "cname.db.corp.example.",
    );
    assert.equal(asked?.name, "cname.db.svc.local.");
    assert.deepEqual(answers(reply), ["cname.db.corp.example. 300 IN CNAME target.db.corp.example."]);
  });

  test("substring replaces every occurrence", async () => {
    const { asked, reply } = await ask("rewrite name substring blue green answer auto", "a.blue.blue.org.");
    // Both FROM and TO are normalised to names: `blue.` and `green.`.
    assert.equal(asked?.name, "a.green.green.org.");
    assert.deepEqual(answers(reply), ["a.blue.blue.org. 300 IN A 192.0.2.1"]);
  });

  test("regex fills in groups; auto maps names below the new name back too", async () => {
    const body = "rewrite name regex (.*)-(us-west-1)\\.example\\.org {1}.service.{2}.consul answer auto";
    const { asked, reply } = await ask(body, "cname.ftp-us-west-1.example.org.");
    assert.equal(asked?.name, "cname.ftp.service.us-west-1.consul.");
    assert.deepEqual(answers(reply), [
      "cname.ftp-us-west-1.example.org. 300 IN CNAME target.ftp.service.us-west-1.consul.",
    ]);
  });

  test("explicit answer name and value rules, in a block", async () => {
    const body = [
      "rewrite stop {",
      "  name regex (.*)-(blue)\\.example\\.org {1}.{2}.svc.local",
      "  answer name (.*)\\.(blue)\\.svc\\.local {1}-{2}.example.org",
      "  answer value target\\.(.*)\\.svc\\.local other.{1}.example.org",
      "}",
    ].join("\n");
    const { asked, reply } = await ask(body, "cname-blue.example.org.");
    assert.equal(asked?.name, "cname.blue.svc.local.");
    assert.deepEqual(answers(reply), ["cname-blue.example.org. 300 IN CNAME other.blue.example.org."]);
  });

  test("a name that cannot be on the wire is SERVFAIL, with the question put back", async () => {
    const seen: Message[] = [];
    const handler = new RewriteHandler(backend(seen), rules("rewrite name regex (.*)\\.org {1}..x"));
    const r = newQuery("a.org.", 1);
    const result = await handler.serveDNS(ctx, { transport: "udp", remote, write() {} }, r);
    assert.equal(result.rcode, 2);
    assert.match(String(result.error?.message), /invalid name after rewrite: a\.\.x\./);
    assert.equal(r.question[0]?.name, "a.org.");
    assert.equal(seen.length, 0);
  });

  test("the reply the backend wrote is not changed (a cache may hold it)", async () => {
    const kept = replyTo(newQuery("b.example.net.", 1));
    kept.answer = [parseRecord("b.example.net. 300 IN CNAME x.b.example.net.")];
    const next: Handler = {
      name: "cache",
      serveDNS: async (_c, w) => {
        w.write(kept);
        return { rcode: 0 };
      },
    };
    const handler = new RewriteHandler(next, rules("rewrite name a.example.org b.example.net"));
    let sent: Message | undefined;
    await handler.serveDNS(
      ctx,
      { transport: "udp", remote, write: (m) => (sent = m) },
      newQuery("a.example.org.", 1),
    );
    assert.deepEqual(answers(sent), ["a.example.org. 300 IN CNAME x.a.example.org."]);
    assert.deepEqual(answers(kept), ["b.example.net. 300 IN CNAME x.b.example.net."]);
    assert.equal(kept.question[0]?.name, "b.example.net.");
  });
});

describe("rewrite type, class, ttl, rcode", () => {
  test("type: the backend is asked the new type; a stopping rule restores the question", async () => {
    const { asked, reply } = await ask("rewrite type AAAA A", "a.example.org.", 28);
    assert.equal(asked?.type, 1);
    assert.equal(reply?.question[0]?.type, 28);
  });

  test("type with continue and no response rules sends the rewritten question, as upstream", async () => {
    const { reply } = await ask("rewrite continue type AAAA A", "a.example.org.", 28);
    assert.equal(reply?.question[0]?.type, 1);
  });

  test("class", async () => {
    const seen: Message[] = [];
    const handler = new RewriteHandler(backend(seen), rules("rewrite class CH IN"));
    const r = newQuery("a.example.org.", 1);
    r.question[0] = { name: "a.example.org.", type: 1, class: 3 };
    let sent: Message | undefined;
    await handler.serveDNS(ctx, { transport: "udp", remote, write: (m) => (sent = m) }, r);
    assert.equal(seen[0]?.question[0]?.class, 1);
    assert.equal(sent?.question[0]?.class, 3);
  });

  test("ttl ranges", () => {
    assert.deepEqual(parseTtlRange("15"), { min: 15, max: 15 });
    assert.deepEqual(parseTtlRange("30-300"), { min: 30, max: 300 });
    assert.deepEqual(parseTtlRange("-30"), { min: 0, max: 30 });
    assert.deepEqual(parseTtlRange("30-"), { min: 30, max: 2147483647 });
    for (const bad of ["-", "300-30", "1-2-3", "x", "+5", "4294967296"]) {
      assert.equal(parseTtlRange(bad), undefined, bad);
    }
  });

  test("ttl: each match type, and clamping into a range", async () => {
    const ttl = async (body: string, name: string) => (await ask(body, name)).reply?.answer[0]?.ttl;
    assert.equal(await ttl("rewrite ttl a.example.org 15", "a.example.org."), 15);
    assert.equal(await ttl("rewrite ttl exact a.example.org 15", "b.example.org."), 300);
    assert.equal(await ttl("rewrite ttl prefix a 15", "a.example.org."), 15);
    assert.equal(await ttl("rewrite ttl suffix example.org 15", "a.example.org."), 15);
    assert.equal(await ttl("rewrite ttl substring example 15", "a.example.org."), 15);
    assert.equal(await ttl("rewrite ttl regex ^a\\. 15", "a.example.org."), 15);
    assert.equal(await ttl("rewrite ttl a.example.org 30-60", "a.example.org."), 60);
    assert.equal(await ttl("rewrite ttl a.example.org 400-", "a.example.org."), 400);
    assert.equal(await ttl("rewrite ttl a.example.org 100-500", "a.example.org."), 300);
  });

  test("rcode: on a reply without records, and on the error reply rewrite writes itself", async () => {
    const nx = await ask("rewrite rcode suffix .example.org NXDOMAIN NOERROR", "nx.example.org.");
    assert.equal(nx.reply?.rcode, 0);
    const fail = await ask("rewrite rcode fail.example.org 2 0", "fail.example.org.");
    assert.equal(fail.result.rcode, 0);
    assert.equal(fail.reply?.rcode, 0);
    assert.equal(fail.reply?.question[0]?.name, "fail.example.org.");
  });

  test("a stopping rule's error reply still carries the client's question", async () => {
    const { result, reply } = await ask(
      "rewrite name exact a.example.org fail.example.org",
      "a.example.org.",
    );
    assert.equal(result.rcode, 0);
    assert.equal(reply?.rcode, 2);
    assert.equal(reply?.question[0]?.name, "a.example.org.");
  });
});

describe("rewrite continue and stop", () => {
  const body = [
    "rewrite continue name suffix .a.test. .b.test. answer auto",
    "rewrite ttl suffix .b.test. 20",
  ].join("\n");

  test("continue: later rules see the rewritten name", async () => {
    const { asked, reply } = await ask(body, "x.a.test.");
    assert.equal(asked?.name, "x.b.test.");
    assert.deepEqual(answers(reply), ["x.a.test. 20 IN A 192.0.2.1"]);
  });

  test("stop (the default) ends the list at the first rule that matched", async () => {
    const { reply } = await ask(body.replace("continue ", ""), "x.a.test.");
    assert.deepEqual(answers(reply), ["x.a.test. 300 IN A 192.0.2.1"]);
  });

  test("a rule that does not match does not stop the list", async () => {
    const { asked } = await ask("rewrite name a.test b.test\nrewrite name c.test d.test", "c.test.");
    assert.equal(asked?.name, "d.test.");
  });

  test("response rules are undone in reverse order", async () => {
    const chained = ["rewrite continue name a.test b.test", "rewrite name b.test c.test"].join("\n");
    const { asked, reply } = await ask(chained, "a.test.");
    assert.equal(asked?.name, "c.test.");
    assert.deepEqual(answers(reply), ["a.test. 300 IN A 192.0.2.1"]);
  });
});

describe("rewrite setup errors", () => {
  const cases: [string, string][] = [
    ["rewrite", "no rule type specified for rewrite"],
    ["rewrite continue", "continue rule must begin with a rule type"],
    ["rewrite stop", "stop rule must begin with a rule type"],
    ["rewrite answer name a b", "response rewrites must begin with a name rule"],
    ["rewrite bogus a b", 'invalid rule type "bogus"'],
    ["rewrite continue bogus a b", 'invalid rule type "continue"'],
    ["rewrite name a", "too few arguments for a name rule"],
    [
      "rewrite name fuzzy a b",
      "name rule supports only exact, prefix, suffix, substring, and regex name matching, received: fuzzy",
    ],
    ["rewrite name regex ( b", "invalid regex matching pattern: ("],
    [
      "rewrite name regex (a) {1}{2}",
      "the rewrite regex pattern ({1}{2}) uses more subexpressions than its corresponding matching regex pattern ((a))",
    ],
    ["rewrite name prefix a b answer", "invalid arguments for prefix rule"],
    [
      "rewrite name prefix a b foo bar",
      "exceeded the number of arguments for a non-answer rule argument for prefix rule",
    ],
    ["rewrite name prefix a b answer bogus", 'invalid type "bogus" for answer rule for prefix rule'],
    ["rewrite name regex a b answer name x", "name answer rule for regex rule: 2 arguments required"],
    [
      "rewrite name regex a b answer value ( x",
      "value answer rule for regex rule: invalid regex matching pattern: (",
    ],
    [
      "rewrite name regex (a) b answer auto answer name a b",
      "auto name answer rule cannot be combined with explicit name anwer rules",
    ],
    ["rewrite name regex (a) b answer auto answer", "type missing for answer rule for regex rule"],
    ["rewrite type A", "type rules must have exactly two arguments"],
    ["rewrite class IN CH HS", "class rules must have exactly two arguments"],
    ["rewrite type A BOGUS", 'invalid type "BOGUS"'],
    ["rewrite class in xx", 'invalid class "XX"'],
    ["rewrite ttl a", "too few (1) arguments for a ttl rule"],
    ["rewrite ttl a 300-30", "invalid TTL '300-30' for a ttl rule"],
    ["rewrite ttl regex a b 30", "invalid TTL '' for a ttl rule"],
    [
      "rewrite ttl fuzzy a 30",
      "ttl rule supports only exact, prefix, suffix, substring, and regex name matching",
    ],
    ["rewrite ttl regex ( 30", "invalid regex pattern in a ttl rule: ("],
    ["rewrite rcode a NOERROR", "too few (2) arguments for a rcode rule"],
    ["rewrite rcode a 24 NOERROR", "invalid matching RCODE '24' for a rcode rule"],
    ["rewrite rcode a SERVFAIL bogus", "invalid replacement RCODE 'bogus' for a rcode rule"],
    ["rewrite rcode regex ( 2 0", "invalid regex pattern in a rcode rule: ("],
    ["rewrite name a.test b.test {\n foo\n}", "no rule type specified for rewrite"],
  ];
  for (const [line, message] of cases) {
    test(line, () => {
      assert.throws(
        () => rules(`whoami\n${line}`),
        (err: Error) => err.message === `plugin/rewrite: ${message}`,
      );
    });
  }

  test("mnemonics and numbers are case-insensitive where upstream's are", () => {
    assert.doesNotThrow(() => parseRule(["STOP", "Type", "aaaa", "nsap-ptr"]));
    assert.doesNotThrow(() => parseRule(["rcode", "a", "notimpl", "badcookie"]));
    assert.doesNotThrow(() => parseRule(["name", "regex", "(?P<host>.*)\\.a", "{1}.b"]));
  });
});

describe("rewrite in a chain", () => {
  /** A backend with a fast path, which must never be taken from behind rewrite. */
  const fastBackend: Setup = () => ({
    plugin: () => ({
      name: "forward",
      answerFromWire: () => assert.fail("answered from wire behind rewrite"),
      serveDNS: backend().serveDNS,
    }),
  });

  test("no reply is answered from wire; cached replies are reverted every time", async () => {
    const registry = new Map<string, Setup>(
      ["errors", "loadbalance", "rewrite", "cache"].map((n) => [n, defaultRegistry().get(n) as Setup]),
    );
    registry.set("forward", fastBackend);
    const text =
      ".:53 {\n errors\n loadbalance\n rewrite name a.example.org b.example.net\n cache\n forward\n}\n";
    const built = buildConfig(parseCorefile(text, { env: {} }), { registry, deps: {} });
    const sites = built.servers[0]?.sites ?? [];
    const packet = encodeMessage(newQuery("a.example.org.", 1, 7));
    for (let i = 0; i < 2; i++) {
      assert.equal(answerFast(packet, sites, "dns://:53", "udp"), undefined);
      const out = await dispatch(packet, { sites, server: "dns://:53", transport: "udp", remote });
      const reply = decodeMessage(out.reply as Buffer);
      assert.equal(reply.kind, "message");
      if (reply.kind !== "message") return;
      assert.equal(reply.message.question[0]?.name, "a.example.org.");
      assert.deepEqual(
        answers(reply.message).map((a) => a.replace(/ \d+ IN/, " IN")),
        ["a.example.org. IN A 192.0.2.1"],
      );
    }
  });
});
