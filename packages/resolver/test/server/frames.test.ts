import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FrameSplitter, frame } from "../../src/server/frames.js";

const msg = (n: number, fill: number) => Buffer.alloc(n, fill);

describe("FrameSplitter", () => {
  test("messages split anywhere across chunks come out whole and in order", () => {
    const stream = Buffer.concat([frame(msg(5, 1)), frame(msg(300, 2)), frame(msg(0, 0)), frame(msg(3, 3))]);
    for (const size of [1, 2, 3, 7, 64, stream.length]) {
      const s = new FrameSplitter();
      const out: Buffer[] = [];
      for (let i = 0; i < stream.length; i += size) out.push(...s.push(stream.subarray(i, i + size)));
      assert.deepEqual(out, [msg(5, 1), msg(300, 2), msg(0, 0), msg(3, 3)], `chunks of ${size}`);
      assert.equal(s.buffered, 0);
    }
  });

  test("take() gives one message at a time; complete says whether one is whole", () => {
    const s = new FrameSplitter();
    s.append(Buffer.concat([frame(msg(4, 9)), frame(msg(6, 8)).subarray(0, 3)]));
    assert.equal(s.complete, true);
    assert.deepEqual(s.take(), msg(4, 9));
    assert.equal(s.complete, false);
    assert.equal(s.take(), undefined);
    assert.equal(s.buffered, 3);
    s.append(frame(msg(6, 8)).subarray(3));
    assert.deepEqual(s.take(), msg(6, 8));
  });

  test("a taken message is a copy: the chunk it came in may be reused", () => {
    const chunk = frame(msg(4, 7));
    const s = new FrameSplitter();
    s.append(chunk);
    const taken = s.take();
    chunk.fill(0);
    assert.deepEqual(taken, msg(4, 7));
  });

  test("a byte at a time, a 64 KiB message is held in few chunks", () => {
    const s = new FrameSplitter();
    const big = frame(msg(65_535, 5));
    for (let i = 0; i < big.length; i++) s.append(big.subarray(i, i + 1));
    const chunks = (s as unknown as { chunks: Buffer[] }).chunks.length;
    assert.ok(chunks <= 70, `${chunks} chunks`);
    assert.deepEqual(s.take(), msg(65_535, 5));
  });
});
