import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Handler, Result } from "../../src/plugin/handler.js";
import { MinimalHandler } from "../../src/plugins/minimal/minimal.js";
import { isPlainNoError } from "../../src/plugins/minimal/typify.js";
import { Resolver } from "../../src/resolver.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { formatRecord, parseRecord } from "../../src/wire/presentation.js";
import { askFast, askFull, chainOf, LOCAL_PEER } from "../helpers/chain.js";

const NS = parseRecord("example.org. 300 IN NS ns1.example.org.");
const GLUE = parseRecord("ns1.example.org. 300 IN A 192.0.2.53");
const SOA = parseRecord("example.org. 300 IN SOA ns1.example.org. h.example.org. 1 2 3 4 5");

/**
 * Answers by the first label: `a` an address with NS and glue, `nx` NXDOMAIN, `nodata` SOA only, `deleg` a
 * referral, `fail` nothing (SERVFAIL). Its fast path must never be taken from behind minimal.
 */
function backend(): Handler & { calls: number } {
  const h = {
    name: "backend",
    calls: 0,
    answerFromWire: () => assert.fail("answered from wire behind minimal"),
    async serveDNS(_c: unknown, w: { write(m: Message): void }, r: Message): Promise<Result> {
      h.calls++;
      const label = r.question[0]?.name.split(".")[0];
      if (label === "fail") return { rcode: 2, error: new Error("boom") };
      const reply = replyTo(r, label === "nx" ? 3 : 0);
      if (label === "a") reply.answer = [parseRecord("a.example.org. 300 IN A 192.0.2.1")];
      reply.authority = label === "a" || label === "deleg" ? [NS] : [SOA];
      reply.additional = label === "a" || label === "deleg" ? [GLUE] : [];
      reply.edns = {
        udpSize: 1232,
        version: 0,
        dnssecOk: false,
        options: [{ code: 15, data: Buffer.alloc(2) }],
      };
      w.write(reply);
      return { rcode: reply.rcode };
    },
  };
  return h;
}

const sections = (m: Message | undefined) =>
  [m?.answer, m?.authority, m?.additional].map((s) => (s ?? []).map(formatRecord).length);

describe("minimal", () => {
  test("a positive answer keeps only its answer section and loses its own OPT", async () => {
    let sent: Message | undefined;
    const w = { transport: "udp" as const, remote: LOCAL_PEER, write: (m: Message) => (sent = m) };
    await new MinimalHandler(backend()).serveDNS({ zone: ".", server: "" }, w, newQuery("a.example.org.", 1));
    assert.deepEqual(sections(sent), [1, 0, 0]);
    assert.equal(sent?.edns, undefined);
  });

  test("denials, delegations and errors pass as they are", async () => {
    const { sites } = chainOf(" minimal", backend());
    assert.deepEqual(sections(await askFull(sites, newQuery("nx.example.org.", 1))), [0, 1, 0]);
    assert.deepEqual(sections(await askFull(sites, newQuery("nodata.example.org.", 1))), [0, 1, 0]);
    assert.deepEqual(sections(await askFull(sites, newQuery("deleg.example.org.", 1))), [0, 1, 1]);
    assert.equal((await askFull(sites, newQuery("fail.example.org.", 1)))?.rcode, 2);
  });

  test("response.Typify's order: NS and no answer is a delegation, an empty NOERROR is trimmed", () => {
    const q = newQuery("x.example.org.", 1);
    const empty = { ...replyTo(q), additional: [GLUE] };
    assert.equal(isPlainNoError(empty, 0), true);
    assert.equal(isPlainNoError({ ...empty, authority: [NS] }, 0), false);
    assert.equal(isPlainNoError({ ...replyTo(newQuery("x.", 252)), answer: [GLUE] }, 0), false);
    // A signature that expired at t=1000: an error with DO set, a positive answer without.
    const rrsig = Buffer.alloc(18);
    rrsig.writeUInt32BE(1000, 8);
    rrsig.writeUInt32BE(500, 12);
    const signed: Message = { ...replyTo(q), answer: [GLUE, { ...GLUE, type: "TYPE46", data: rrsig }] };
    assert.equal(isPlainNoError(signed, 2000), true);
    signed.edns = { udpSize: 1232, version: 0, dnssecOk: true, options: [] };
    assert.equal(isPlainNoError(signed, 2000), false);
    assert.equal(isPlainNoError(signed, 800), true);
  });

  test("behind cache the trimmed reply is what is stored, and hits come from wire trimmed", async () => {
    const b = backend();
    const { sites } = chainOf(" cache\n minimal", b);
    const q = newQuery("a.example.org.", 1, 3);
    assert.equal(askFast(sites, q), undefined);
    assert.deepEqual(sections(await askFull(sites, q)), [1, 0, 0]);
    assert.deepEqual(sections(askFast(sites, q)), [1, 0, 0]);
    assert.equal(b.calls, 1);
  });

  test("with nothing in front of it, the fast path is off and the full path trims", async () => {
    const { sites } = chainOf(" minimal\n errors", backend());
    const q = newQuery("a.example.org.", 1, 4, { udpSize: 1232, version: 0, dnssecOk: false, options: [] });
    assert.equal(askFast(sites, q), undefined);
    const reply = await askFull(sites, q);
    assert.deepEqual(sections(reply), [1, 0, 0]);
    // The server's own OPT comes back: the query's buffer size, no options of the backend's.
    assert.deepEqual(reply?.edns?.options, []);
  });

  test("takes no arguments, with upstream's wording", () => {
    assert.throws(
      () => Resolver.fromCorefile(".:0 {\n minimal x\n}\n", { file: "Corefile" }),
      /plugin\/minimal: Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'x'$/,
    );
    assert.throws(
      () => Resolver.fromCorefile(".:0 {\n minimal {\n  x\n }\n}\n"),
      /plugin\/minimal: \S+:\d+ - Error during parsing: Unexpected token '\{', expecting argument$/,
    );
    assert.doesNotThrow(() => Resolver.fromCorefile(".:0 {\n minimal\n minimal x\n whoami\n}\n"));
  });
});
