import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { badVersionReply, replyEdns, replySizeLimit } from "../../src/wire/edns.js";
import { encodeMessage } from "../../src/wire/encode.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { parseRecord } from "../../src/wire/presentation.js";
import { fitToSize } from "../../src/wire/truncate.js";

function bigReply(n: number) {
  const r = replyTo(newQuery("headless.default.svc.cluster.local.", 1));
  r.answer = Array.from({ length: n }, (_, i) =>
    parseRecord(`headless.default.svc.cluster.local. 30 IN A 10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`),
  );
  return r;
}

describe("fitToSize", () => {
  test("leaves a reply that fits alone", () => {
    const r = bigReply(3);
    assert.equal(fitToSize(r, 512), r);
  });

  test("drops records from the end and sets TC", () => {
    const r = bigReply(100);
    const fitted = fitToSize(r, 512);
    const size = encodeMessage(fitted).length;
    assert.ok(size <= 512, `${size} > 512`);
    assert.equal(fitted.tc, true);
    // header 12 + question 40 = 52; each compressed A is 16 bytes: (512 - 52) / 16 = 28.
    assert.equal(fitted.answer.length, 28);
    assert.deepEqual(fitted.answer, r.answer.slice(0, 28));
    assert.equal(r.answer.length, 100, "input untouched");
  });

  test("keeps the OPT record and counts it against the budget", () => {
    const r = bigReply(100);
    r.edns = { udpSize: 1232, version: 0, dnssecOk: false, options: [] };
    const fitted = fitToSize(r, 1232);
    assert.ok(fitted.edns);
    assert.ok(encodeMessage(fitted).length <= 1232);
    assert.equal(fitted.answer.length, Math.floor((1232 - 52 - 11) / 16));
  });

  test("sizes below 512 count as 512", () => {
    assert.equal(fitToSize(bigReply(100), 100).answer.length, 28);
  });
});

describe("EDNS", () => {
  test("reply size limits per transport", () => {
    const plain = newQuery("a.", 1);
    const edns = newQuery("a.", 1, 0, { udpSize: 4096, version: 0, dnssecOk: false, options: [] });
    const tiny = newQuery("a.", 1, 0, { udpSize: 100, version: 0, dnssecOk: false, options: [] });
    assert.equal(replySizeLimit(plain, "udp"), 512);
    assert.equal(replySizeLimit(edns, "udp"), 4096);
    assert.equal(replySizeLimit(tiny, "udp"), 512);
    assert.equal(replySizeLimit(plain, "tcp"), 65535);
  });

  test("reply OPT mirrors size and DO, keeps only understood options", () => {
    const q = newQuery("a.", 1, 0, {
      udpSize: 1232,
      version: 0,
      dnssecOk: true,
      options: [
        { code: 10, data: Buffer.from("0123456789abcdef", "hex") },
        { code: 8, data: Buffer.from("00011800c0000200", "hex") },
      ],
    });
    const opt = replyEdns(q, replyTo(q));
    assert.equal(opt?.udpSize, 1232);
    assert.equal(opt?.dnssecOk, true);
    assert.deepEqual(
      opt?.options.map((o) => o.code),
      [10],
    );
    assert.equal(replyEdns(newQuery("a.", 1), replyTo(newQuery("a.", 1))), undefined);
  });

  test("EDNS version 1 gets BADVERS", () => {
    const q = newQuery("a.", 1, 9, { udpSize: 1232, version: 1, dnssecOk: false, options: [] });
    const r = badVersionReply(q);
    assert.equal(r?.rcode, 16);
    assert.equal(r?.edns?.version, 0);
    assert.equal(badVersionReply(newQuery("a.", 1)), undefined);
  });
});
