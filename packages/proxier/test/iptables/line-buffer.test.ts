import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LineBuffer } from "../../src/iptables/line-buffer.js";

describe("LineBuffer", () => {
  test("lines come back in order, each ending in a newline, from text and from the chunks", () => {
    const b = new LineBuffer();
    b.write("-A", "KUBE-SERVICES", ["-m", "comment"], "--comment", '"ns/a:http cluster IP"');
    b.line(":KUBE-SVC-X - [0:0]");
    const want = '-A KUBE-SERVICES -m comment --comment "ns/a:http cluster IP"\n:KUBE-SVC-X - [0:0]\n';
    assert.equal(b.text, want);
    assert.equal(Buffer.concat(b.chunks).toString("utf8"), want);
    assert.deepEqual(b.lines, [
      '-A KUBE-SERVICES -m comment --comment "ns/a:http cluster IP"',
      ":KUBE-SVC-X - [0:0]",
    ]);
    assert.equal(b.length, 2);
  });

  test("many lines span several chunks without losing or splitting any", () => {
    const b = new LineBuffer();
    const lines = Array.from(
      { length: 5000 },
      (_, i) => `-A KUBE-SEP-${i} -p tcp -j DNAT --to-destination 10.0.${i >> 8}.${i & 255}:80`,
    );
    for (const l of lines) b.line(l);
    assert.ok(b.chunks.length > 1, "expected more than one chunk");
    assert.deepEqual(b.lines, lines);
  });

  test("a line longer than a chunk and non-ASCII text keep their bytes", () => {
    const b = new LineBuffer();
    const long = `-A X -m comment --comment "${"x".repeat(200_000)}"`;
    b.line("first");
    b.line(long);
    b.line('-A X -m comment --comment "zoë ☃"');
    assert.deepEqual(b.lines, ["first", long, '-A X -m comment --comment "zoë ☃"']);
  });

  test("reading the text does not stop later writes", () => {
    const b = new LineBuffer();
    b.line("a");
    assert.equal(b.text, "a\n");
    b.line("b");
    assert.equal(b.text, "a\nb\n");
  });
});
