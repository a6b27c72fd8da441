import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Stanza } from "../../src/corefile/parse.js";
import { Metrics } from "../../src/metrics/metrics.js";
import type { Handler, ResponseWriter } from "../../src/plugin/handler.js";
import { CacheHandler } from "../../src/plugins/cache/handler.js";
import { cacheMetrics } from "../../src/plugins/cache/metrics.js";
import { parseCache } from "../../src/plugins/cache/options.js";
import { dispatch } from "../../src/server/dispatch.js";
import { decodeMessage } from "../../src/wire/decode.js";
import { encodeMessage } from "../../src/wire/encode.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { parseRecord } from "../../src/wire/presentation.js";

const SOA = "example.org. 300 IN SOA ns.example.org. hostmaster.example.org. 1 7200 1800 86400 30";

/** An upstream stand-in: answers from a table keyed by lower-case name, counting what reaches it. */
function upstream(table: Record<string, (r: Message) => Message>): Handler & { calls: string[] } {
  const calls: string[] = [];
  return {
    name: "upstream",
    calls,
    async serveDNS(_ctx, w, r) {
      const name = r.question[0]?.name.toLowerCase() ?? "";
      calls.push(name);
      const make = table[name];
      if (!make) return { rcode: 2 };
      const reply = make(r);
      w.write(reply);
      return { rcode: reply.rcode };
    },
  };
}

function answer(r: Message, lines: string[], rcode = 0, authority: string[] = []): Message {
  return { ...replyTo(r, rcode), answer: lines.map(parseRecord), authority: authority.map(parseRecord) };
}

function corefileStanza(text: string): Stanza {
  const [head = "", ...rest] = text.trim().split("\n");
  const [name = "", ...args] = head.replace("{", "").trim().split(/\s+/);
  const block = rest
    .filter((l) => l.trim() !== "}")
    .map((l, i) => {
      const [n = "", ...a] = l.trim().split(/\s+/);
      return { name: n, args: a, block: [], file: "Corefile", line: i + 2 };
    });
  return { name, args, block, file: "Corefile", line: 1 };
}

function setup(text: string, next: Handler) {
  let clock = 1_000_000;
  const metrics = new Metrics();
  const cache = new CacheHandler(
    next,
    parseCache(corefileStanza(text), ["."]),
    () => clock,
    cacheMetrics(metrics),
  );
  const ask = async (name: string, opts: { id?: number; type?: number; dnssecOk?: boolean } = {}) => {
    const q = newQuery(
      name,
      opts.type ?? 1,
      opts.id ?? 7,
      opts.dnssecOk === undefined
        ? undefined
        : { udpSize: 1232, version: 0, dnssecOk: opts.dnssecOk, options: [] },
    );
    const out = await dispatch(encodeMessage(q), {
      sites: [{ zone: ".", handler: cache }],
      server: "dns://:53",
      transport: "udp",
      remote: { address: "127.0.0.1", port: 1, family: "IPv4" },
    });
    const d = decodeMessage(out.reply as Buffer);
    assert.equal(d.kind, "message");
    return (d as { message: Message }).message;
  };
  return {
    cache,
    ask,
    metrics,
    advance: (s: number) => {
      clock += s * 1000;
    },
  };
}

describe("cache", () => {
  test("second query is a hit whose TTL counts down, with the new ID and question case", async () => {
    const up = upstream({ "a.example.org.": (r) => answer(r, ["a.example.org. 120 IN A 192.0.2.1"]) });
    const c = setup("cache 30", up);
    const first = await c.ask("a.example.org.", { id: 1 });
    assert.equal(first.answer[0]?.ttl, 30, "capped at the configured maximum");
    c.advance(12);
    const second = await c.ask("A.Example.ORG.", { id: 2 });
    assert.deepEqual(up.calls, ["a.example.org."]);
    assert.equal(second.id, 2);
    assert.equal(second.aa, true);
    assert.equal(second.question[0]?.name, "A.Example.ORG.");
    assert.equal(second.answer[0]?.name, "a.example.org.", "owner keeps the spelling that filled the cache");
    assert.equal(second.answer[0]?.ttl, 18);
    assert.match(
      await c.metrics.text(),
      /coredns_cache_hits_total\{server="dns:\/\/:53",zones="\.",view="",type="success"\} 1/,
    );
  });

  test("short TTLs are raised to the minimum, and entries expire", async () => {
    const up = upstream({ "a.example.org.": (r) => answer(r, ["a.example.org. 1 IN A 192.0.2.1"]) });
    const c = setup("cache", up);
    assert.equal((await c.ask("a.example.org.")).answer[0]?.ttl, 5);
    c.advance(4);
    assert.equal((await c.ask("a.example.org.")).answer[0]?.ttl, 1);
    c.advance(1);
    await c.ask("a.example.org.");
    assert.equal(up.calls.length, 2);
  });

  test("NXDOMAIN with SOA is cached as denial; without SOA it is not", async () => {
    const up = upstream({
      "nx.example.org.": (r) => answer(r, [], 3, [SOA]),
      "bare.example.org.": (r) => answer(r, [], 3),
    });
    const c = setup("cache", up);
    await c.ask("nx.example.org.");
    const hit = await c.ask("nx.example.org.");
    assert.equal(hit.rcode, 3);
    assert.equal(hit.authority[0]?.ttl, 300, "the SOA's own TTL counts, not its MINIMUM");
    await c.ask("bare.example.org.");
    await c.ask("bare.example.org.");
    assert.deepEqual(up.calls, ["nx.example.org.", "bare.example.org.", "bare.example.org."]);
    assert.equal(c.cache.denial.size, 1);
  });

  test("truncated replies and REFUSED are never stored", async () => {
    const up = upstream({
      "tc.example.org.": (r) => ({ ...answer(r, ["tc.example.org. 60 IN A 192.0.2.1"]), tc: true }),
      "ref.example.org.": (r) => answer(r, [], 5),
    });
    const c = setup("cache", up);
    for (let i = 0; i < 2; i++) {
      await c.ask("tc.example.org.");
      await c.ask("ref.example.org.");
    }
    assert.equal(up.calls.length, 4);
  });

  test("SERVFAIL is kept for the servfail duration; servfail 0 keeps none", async () => {
    const up = upstream({ "sf.example.org.": (r) => answer(r, [], 2) });
    const c = setup("cache {\n servfail 2s\n}", up);
    await c.ask("sf.example.org.");
    c.advance(1);
    assert.equal((await c.ask("sf.example.org.")).rcode, 2);
    c.advance(1);
    await c.ask("sf.example.org.");
    assert.equal(up.calls.length, 2);
    const none = setup("cache {\n servfail 0s\n}", up);
    await none.ask("sf.example.org.");
    await none.ask("sf.example.org.");
    assert.equal(up.calls.length, 4);
  });

  test("the DO bit is part of the key", async () => {
    const up = upstream({ "a.example.org.": (r) => answer(r, ["a.example.org. 60 IN A 192.0.2.1"]) });
    const c = setup("cache", up);
    await c.ask("a.example.org.", { dnssecOk: false });
    await c.ask("a.example.org.", { dnssecOk: true });
    await c.ask("a.example.org.", { dnssecOk: true });
    assert.equal(up.calls.length, 2);
  });

  test("disable denial stores no negative answers; keepttl serves the original TTL", async () => {
    const up = upstream({
      "nx.example.org.": (r) => answer(r, [], 3, [SOA]),
      "a.example.org.": (r) => answer(r, ["a.example.org. 60 IN A 192.0.2.1"]),
    });
    const c = setup("cache {\n disable denial\n keepttl\n}", up);
    await c.ask("nx.example.org.");
    await c.ask("nx.example.org.");
    await c.ask("a.example.org.");
    c.advance(20);
    assert.equal((await c.ask("a.example.org.")).answer[0]?.ttl, 60);
    assert.deepEqual(up.calls, ["nx.example.org.", "nx.example.org.", "a.example.org."]);
  });

  test("serve_stale answers an expired entry with TTL 0 and refreshes it in the background", async () => {
    let address = "192.0.2.1";
    const up = upstream({ "a.example.org.": (r) => answer(r, [`a.example.org. 10 IN A ${address}`]) });
    const c = setup("cache {\n serve_stale 1h\n}", up);
    await c.ask("a.example.org.");
    c.advance(15);
    address = "192.0.2.2";
    const stale = await c.ask("a.example.org.");
    assert.equal(stale.answer[0]?.ttl, 0);
    assert.equal(stale.answer[0]?.data, "192.0.2.1");
    await c.cache.settled();
    const fresh = await c.ask("a.example.org.");
    assert.equal(fresh.answer[0]?.data, "192.0.2.2");
    assert.equal(fresh.answer[0]?.ttl, 10);
    assert.match(await c.metrics.text(), /coredns_cache_served_stale_total\{[^}]*\} 1/);
  });

  test("serve_stale verify asks upstream first and falls back to the stale entry on failure", async () => {
    let fail = false;
    const up: Handler & { calls: number } = {
      name: "up",
      calls: 0,
      async serveDNS(_ctx, w, r) {
        this.calls++;
        if (fail) return { rcode: 2 };
        w.write(answer(r, ["a.example.org. 10 IN A 192.0.2.1"]));
        return { rcode: 0 };
      },
    };
    const c = setup("cache {\n serve_stale 1h verify\n}", up);
    await c.ask("a.example.org.");
    c.advance(11);
    assert.equal((await c.ask("a.example.org.")).answer[0]?.ttl, 10, "verified: fresh answer");
    c.advance(11);
    fail = true;
    const stale = await c.ask("a.example.org.");
    assert.equal(stale.rcode, 0);
    assert.equal(stale.answer[0]?.ttl, 0);
    assert.equal(up.calls, 3);
  });

  test("prefetch refreshes a popular entry before it expires", async () => {
    const up = upstream({ "a.example.org.": (r) => answer(r, ["a.example.org. 100 IN A 192.0.2.1"]) });
    const c = setup("cache {\n prefetch 2 1m 10%\n}", up);
    await c.ask("a.example.org.");
    c.advance(50);
    await c.ask("a.example.org.");
    await c.ask("a.example.org.");
    await c.cache.settled();
    assert.equal(up.calls.length, 1, "not yet within the last 10%");
    c.advance(41);
    const hit = await c.ask("a.example.org.");
    assert.equal(hit.answer[0]?.ttl, 9);
    await c.cache.settled();
    assert.equal(up.calls.length, 2);
    assert.equal((await c.ask("a.example.org.")).answer[0]?.ttl, 100);
  });

  test("a reply for another question is passed on but not stored", async () => {
    const up = upstream({
      "a.example.org.": (r) => ({
        ...answer(r, []),
        question: [{ name: "b.example.org.", type: 1, class: 1 }],
      }),
    });
    const c = setup("cache", up);
    await c.ask("a.example.org.");
    await c.ask("a.example.org.");
    assert.equal(up.calls.length, 2);
    assert.match(await c.metrics.text(), /coredns_cache_drops_total\{[^}]*\} 2/);
  });

  test("a hit writes stored bytes: only ID, flags, TTLs and the question differ", async () => {
    const up = upstream({ "a.example.org.": (r) => answer(r, ["a.example.org. 60 IN A 192.0.2.1"]) });
    const c = setup("cache", up);
    await c.ask("a.example.org.");
    let wire: Buffer | undefined;
    const w: ResponseWriter = {
      transport: "udp",
      remote: { address: "127.0.0.1", port: 1, family: "IPv4" },
      write: (_m, b) => {
        wire = b;
      },
    };
    await c.cache.serveDNS({ zone: ".", server: "s" }, w, newQuery("a.EXAMPLE.org.", 1, 0xbeef));
    assert.ok(wire, "the hit carries its encoding");
    const d = decodeMessage(wire);
    assert.equal(d.kind, "message");
    const m = (d as { message: Message }).message;
    assert.equal(m.id, 0xbeef);
    assert.equal(m.question[0]?.name, "a.EXAMPLE.org.");
    assert.equal(m.answer[0]?.ttl, 60);
  });
});

describe("cache setup", () => {
  test("defaults and options", () => {
    const o = parseCache(corefileStanza("cache"), ["."]);
    assert.deepEqual([o.successMaxTtl, o.denialMaxTtl, o.successMinTtl, o.servfailTtl], [3600, 1800, 5, 5]);
    const p = parseCache(corefileStanza("cache 30 example.org\n success 5000 600 0\n denial 100"), ["."]);
    assert.deepEqual([p.successMaxTtl, p.successMinTtl, p.denialMaxTtl, p.denialCap], [600, 0, 30, 100]);
    assert.deepEqual(p.zones, ["example.org."]);
  });

  test("errors: upstream's plain errors without a position, the parser's with the Corefile line", () => {
    assert.throws(
      () => parseCache(corefileStanza("cache 0"), ["."]),
      /^PluginError: plugin\/cache: cache TTL can not be zero or negative: 0$/,
    );
    assert.throws(
      () => parseCache(corefileStanza("cache {\n prefetch 1 1m 5%\n}"), ["."]),
      /^PluginError: plugin\/cache: percentage should fall in range \[10, 90\]: 5$/,
    );
    assert.throws(() => parseCache(corefileStanza("cache {\n servfail 10m\n}"), ["."]), /over 5 minutes/);
    assert.throws(() => parseCache(corefileStanza("cache {\n bogus\n}"), ["."]), /unknown property 'bogus'/);
  });
});
