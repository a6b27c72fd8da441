import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as packet from "dns-packet";
import { decodeMessage } from "../../src/wire/decode.js";
import { encodeMessage } from "../../src/wire/encode.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { formatRecord, parseRecord } from "../../src/wire/presentation.js";

function reply(lines: string[], qname = "web.Default.svc.Cluster.Local."): Message {
  const r = replyTo(newQuery(qname, 1, 4242));
  r.aa = true;
  r.answer = lines.map(parseRecord);
  return r;
}

function decodeOk(buf: Buffer): Message {
  const d = decodeMessage(buf);
  assert.equal(d.kind, "message", d.kind === "message" ? "" : d.reason);
  return (d as { message: Message }).message;
}

describe("encodeMessage", () => {
  test("round-trips every record type we answer with", () => {
    const lines = [
      "web.default.svc.cluster.local. 30 IN A 172.30.0.10",
      "web.default.svc.cluster.local. 30 IN AAAA fd00:30::a",
      "ext.default.svc.cluster.local. 30 IN CNAME example.org.",
      "10.0.30.172.in-addr.arpa. 30 IN PTR web.default.svc.cluster.local.",
      "_http._tcp.web.default.svc.cluster.local. 30 IN SRV 0 100 80 web.default.svc.cluster.local.",
      "cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1700000000 7200 1800 86400 30",
      'dns-version.cluster.local. 28800 IN TXT "1.1.0"',
      "cluster.local. 30 IN NS ns.dns.cluster.local.",
      "cluster.local. 30 IN MX 10 mail.cluster.local.",
    ];
    const back = decodeOk(encodeMessage(reply(lines)));
    assert.deepEqual(back.answer.map(formatRecord), lines);
    assert.equal(back.id, 4242);
    assert.equal(back.qr, true);
    assert.equal(back.aa, true);
  });

  test("output is well formed for an independent decoder (dns-packet)", () => {
    const msg = reply([
      "web.default.svc.cluster.local. 30 IN A 172.30.0.10",
      "_http._tcp.web.default.svc.cluster.local. 30 IN SRV 0 100 80 web.default.svc.cluster.local.",
      "cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 30",
    ]);
    const theirs = packet.decode(encodeMessage(msg));
    assert.equal(theirs.answers?.length, 3);
    const soa = theirs.answers?.[2];
    assert.equal(soa?.type, "SOA");
    assert.equal((soa as { data: { mname: string } }).data.mname, "ns.dns.cluster.local");
    const srv = theirs.answers?.[1] as { data: { target: string } };
    assert.equal(srv.data.target, "web.default.svc.cluster.local");
  });

  test("compresses repeated names and is smaller than dns-packet's output", () => {
    const lines = Array.from(
      { length: 10 },
      (_, i) => `web.default.svc.cluster.local. 30 IN A 10.0.0.${i + 1}`,
    );
    const msg = reply(lines, "web.default.svc.cluster.local.");
    const ours = encodeMessage(msg);
    const plain = encodeMessage(msg, { compress: false });
    // Each answer owner becomes a 2-byte pointer to the question name.
    assert.equal(plain.length - ours.length, 10 * ("web.default.svc.cluster.local.".length + 1 - 2));
    assert.deepEqual(decodeOk(ours).answer.map(formatRecord), lines);
  });

  test("keeps the question's 0x20 spelling byte for byte", () => {
    const msg = reply(
      ["web.default.svc.cluster.local. 30 IN A 172.30.0.10"],
      "wEb.DeFaUlT.sVc.ClUsTeR.lOcAl.",
    );
    const buf = encodeMessage(msg);
    assert.ok(buf.includes(Buffer.from("\u0003wEb\u0007DeFaUlT")));
    assert.equal(decodeOk(buf).question[0]?.name, "wEb.DeFaUlT.sVc.ClUsTeR.lOcAl.");
    // The lower-case answer owner must not be compressed onto the mixed-case question.
    assert.equal(decodeOk(buf).answer[0]?.name, "web.default.svc.cluster.local.");
  });

  test("never compresses SRV targets (RFC 2782)", () => {
    const msg = reply([
      "_h._tcp.web.default.svc.cluster.local. 30 IN SRV 0 100 80 web.default.svc.cluster.local.",
    ]);
    const buf = encodeMessage(msg, { compress: true });
    const target = Buffer.from("\u0003web\u0007default\u0003svc\u0007cluster\u0005local\u0000", "latin1");
    assert.ok(buf.includes(target));
  });

  test("binary label bytes survive a round trip", () => {
    const name = "a\\255b\\.c.example.";
    const back = decodeOk(encodeMessage(newQuery(name, 1)));
    assert.equal(back.question[0]?.name, name);
  });

  test("extended rcode travels in the OPT record", () => {
    const msg = replyTo(newQuery("x.", 1));
    msg.rcode = 16;
    msg.edns = { udpSize: 0, version: 0, dnssecOk: false, options: [] };
    const buf = encodeMessage(msg);
    assert.equal(buf.readUInt16BE(2) & 0xf, 0);
    assert.equal(decodeOk(buf).rcode, 16);
    assert.throws(() => encodeMessage({ ...msg, edns: undefined }), /needs an OPT record/);
  });

  test("rejects an oversized label with a clear error", () => {
    assert.throws(
      () => encodeMessage(newQuery(`${"a".repeat(64)}.example.`, 1)),
      /label longer than 63 bytes/,
    );
  });
});

describe("decodeMessage", () => {
  test("short packets are unreadable", () => {
    assert.equal(decodeMessage(Buffer.alloc(11)).kind, "unreadable");
  });

  test("a truncated body is malformed but keeps the header", () => {
    const buf = encodeMessage(newQuery("example.org.", 1, 7));
    const d = decodeMessage(buf.subarray(0, buf.length - 3));
    assert.equal(d.kind, "malformed");
    assert.equal(d.kind === "malformed" && d.header.id, 7);
  });

  test("rejects forward and self-referencing compression pointers", () => {
    const buf = Buffer.from(encodeMessage(newQuery("a.", 1)));
    buf.writeUInt16BE(0xc000 | 12, 12); // the question name points at itself
    const d = decodeMessage(buf);
    assert.equal(d.kind, "malformed");
    assert.match(d.kind === "malformed" ? d.reason : "", /forward compression pointer/);
  });

  test("an A record with the wrong rdlength is malformed (dns-packet would accept it)", () => {
    const msg = reply(["web.default.svc.cluster.local. 30 IN A 172.30.0.10"]);
    const buf = Buffer.from(encodeMessage(msg));
    const rdlengthAt = buf.length - 6;
    buf.writeUInt16BE(3, rdlengthAt);
    assert.equal(decodeMessage(buf.subarray(0, buf.length - 1)).kind, "malformed");
  });

  test("reads OPT: buffer size, version, DO bit", () => {
    const q = newQuery("example.org.", 1, 1, { udpSize: 1232, version: 0, dnssecOk: true, options: [] });
    const back = decodeOk(encodeMessage(q));
    assert.deepEqual(back.edns, { udpSize: 1232, version: 0, dnssecOk: true, options: [] });
    assert.equal(back.additional.length, 0);
  });

  test("keeps unknown classes and types numerically", () => {
    const q = newQuery("example.org.", 65280);
    q.question[0] = { name: "example.org.", type: 65280, class: 254 };
    const back = decodeOk(encodeMessage(q));
    assert.deepEqual(back.question[0], { name: "example.org.", type: 65280, class: 254 });
  });
});
