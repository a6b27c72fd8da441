import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCorefile } from "../../src/corefile/parse.js";
import { buildConfig } from "../../src/plugin/build.js";
import type { Handler } from "../../src/plugin/handler.js";
import { defaultRegistry } from "../../src/registry.js";
import type { DispatchContext } from "../../src/server/dispatch.js";
import { dispatch } from "../../src/server/dispatch.js";
import { decodeMessage } from "../../src/wire/decode.js";
import { encodeMessage } from "../../src/wire/encode.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery } from "../../src/wire/message.js";
import { formatRecord } from "../../src/wire/presentation.js";
import { staticZone } from "../helpers/static-zone.js";

const many = Array.from({ length: 60 }, (_, i) => `big.example.org. 30 IN A 10.1.0.${i + 1}`);
const example = staticZone(["www.example.org. 30 IN A 192.0.2.1", ...many], "example");
const sub = staticZone(["www.sub.example.org. 30 IN A 192.0.2.2"], "sub");

function ctx(
  transport: "udp" | "tcp" = "udp",
  sites = [
    { zone: "example.org.", handler: example as Handler },
    { zone: "sub.example.org.", handler: sub as Handler },
  ],
): DispatchContext {
  return {
    sites,
    server: "dns://:53",
    transport,
    remote: { address: "127.0.0.1", port: 5353, family: "IPv4" },
  };
}

async function ask(packet: Buffer, transport: "udp" | "tcp" = "udp"): Promise<Message | undefined> {
  const out = await dispatch(packet, ctx(transport));
  if (!out.reply) return undefined;
  const d = decodeMessage(out.reply);
  assert.equal(d.kind, "message");
  return d.kind === "message" ? d.message : undefined;
}

describe("dispatch", () => {
  test("answers from the longest matching zone", async () => {
    const r = await ask(encodeMessage(newQuery("www.sub.example.org.", 1, 11)));
    assert.deepEqual(r?.answer.map(formatRecord), ["www.sub.example.org. 30 IN A 192.0.2.2"]);
    const r2 = await ask(encodeMessage(newQuery("www.example.org.", 1, 12)));
    assert.deepEqual(r2?.answer.map(formatRecord), ["www.example.org. 30 IN A 192.0.2.1"]);
  });

  test("a name outside every zone is REFUSED with the question echoed", async () => {
    const r = await ask(encodeMessage(newQuery("www.example.com.", 1, 13)));
    assert.equal(r?.rcode, 5);
    assert.equal(r?.question[0]?.name, "www.example.com.");
  });

  test("garbage shorter than a header is dropped", async () => {
    assert.equal(await ask(Buffer.from([1, 2, 3])), undefined);
  });

  test("responses are dropped, not answered", async () => {
    const q = newQuery("www.example.org.", 1);
    q.qr = true;
    assert.equal(await ask(encodeMessage(q)), undefined);
  });

  test("an unknown opcode gets NOTIMP with the opcode kept", async () => {
    const q = newQuery("www.example.org.", 1, 14);
    q.opcode = 2;
    const r = await ask(encodeMessage(q));
    assert.equal(r?.rcode, 4);
    assert.equal(r?.opcode, 2);
    assert.equal(r?.id, 14);
  });

  test("two questions get FORMERR", async () => {
    const q = newQuery("www.example.org.", 1, 15);
    q.question.push({ name: "x.example.org.", type: 1, class: 1 });
    const r = await ask(encodeMessage(q));
    assert.equal(r?.rcode, 1);
    assert.equal(r?.question.length, 0);
  });

  test("a body that fails to parse gets FORMERR, never a malformed reply", async () => {
    const buf = encodeMessage(newQuery("www.example.org.", 1, 16));
    const r = await ask(buf.subarray(0, buf.length - 2));
    assert.equal(r?.rcode, 1);
    assert.equal(r?.id, 16);
  });

  test("class CH is REFUSED, unless the server is open to every class (a block with forward)", async () => {
    const q = newQuery("www.example.org.", 1, 17);
    q.question[0] = { name: "www.example.org.", type: 1, class: 3 };
    const r = await ask(encodeMessage(q));
    assert.equal(r?.rcode, 5);
    assert.equal(r?.question[0]?.class, 3);
    example.seen.length = 0;
    const open = await dispatch(encodeMessage(q), { ...ctx(), anyClass: true });
    assert.equal(example.seen[0]?.question[0]?.class, 3, "the chain got the CH question");
    assert.ok(open.reply);
  });

  test("EDNS version 1 gets BADVERS", async () => {
    const q = newQuery("www.example.org.", 1, 18, {
      udpSize: 1232,
      version: 1,
      dnssecOk: false,
      options: [],
    });
    const r = await ask(encodeMessage(q));
    assert.equal(r?.rcode, 16);
    assert.equal(r?.edns?.version, 0);
  });

  test("UDP without EDNS is truncated to 512 bytes with TC; TCP is not", async () => {
    const packet = encodeMessage(newQuery("big.example.org.", 1, 19));
    const out = await dispatch(packet, ctx("udp"));
    assert.ok((out.reply?.length ?? 0) <= 512);
    const udp = await ask(packet, "udp");
    assert.equal(udp?.tc, true);
    assert.ok((udp?.answer.length ?? 0) < 60);
    const tcp = await ask(packet, "tcp");
    assert.equal(tcp?.tc, false);
    assert.equal(tcp?.answer.length, 60);
  });

  test("an EDNS client gets its buffer size and an OPT back", async () => {
    const q = newQuery("big.example.org.", 1, 20, {
      udpSize: 4096,
      version: 0,
      dnssecOk: false,
      options: [],
    });
    const r = await ask(encodeMessage(q));
    assert.equal(r?.tc, false);
    assert.equal(r?.answer.length, 60);
    assert.equal(r?.edns?.udpSize, 4096);
  });

  test("a chain that writes nothing and returns SERVFAIL yields a SERVFAIL reply", async () => {
    const failing: Handler = {
      name: "failing",
      serveDNS: async () => ({ rcode: 2, error: new Error("boom") }),
    };
    const out = await dispatch(
      encodeMessage(newQuery("a.test.", 1, 21)),
      ctx("udp", [{ zone: ".", handler: failing }]),
    );
    const d = decodeMessage(out.reply ?? Buffer.alloc(0));
    assert.equal(d.kind === "message" && d.message.rcode, 2);
    assert.equal(out.error?.message, "boom");
  });

  test("a record the encoder rejects becomes SERVFAIL, not a broken packet", async () => {
    const broken: Handler = {
      name: "broken",
      serveDNS: async (_c, w, r) => {
        w.write({
          ...r,
          qr: true,
          answer: [{ name: "a.test.", type: "A", class: 1, ttl: 5, data: "999.1.1.1" }],
        });
        return { rcode: 0 };
      },
    };
    const out = await dispatch(
      encodeMessage(newQuery("a.test.", 1, 22)),
      ctx("udp", [{ zone: ".", handler: broken }]),
    );
    const d = decodeMessage(out.reply ?? Buffer.alloc(0));
    assert.equal(d.kind === "message" && d.message.rcode, 2);
    assert.match(out.error?.message ?? "", /bad IPv4 address/);
  });
});

describe("classes other than IN", () => {
  test("a server with forward in any of its blocks is open to them, as CoreDNS's EnableChaos list makes it", () => {
    const settings = (corefile: string) =>
      buildConfig(parseCorefile(corefile, { env: {} }), {
        registry: defaultRegistry(),
        deps: {},
      }).servers.map((s) => s.settings.anyClass === true);
    assert.deepEqual(
      settings(
        "a.test:1053 {\n  whoami\n}\nb.test:1053 {\n  forward . 127.0.0.1:9\n}\nc.test:1054 {\n  whoami\n}\n",
      ),
      [true, false],
    );
  });
});
