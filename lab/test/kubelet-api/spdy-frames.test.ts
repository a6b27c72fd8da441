import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { headerDictionary, headerDictionaryLength } from "../../src/agent/kubelet-api/spdy/dictionary.js";
import { FrameReader } from "../../src/agent/kubelet-api/spdy/frame-reader.js";
import {
  decodeFrame,
  encodeFrame,
  flagFin,
  type SpdyFrame,
  SpdyProtocolError,
} from "../../src/agent/kubelet-api/spdy/frames.js";
import {
  decodeHeaderBlock,
  encodeHeaderBlock,
  spdyHeaders,
} from "../../src/agent/kubelet-api/spdy/header-block.js";
import { HeaderCompressor, HeaderDecompressor } from "../../src/agent/kubelet-api/spdy/header-compression.js";

const everyKind: SpdyFrame[] = [
  { type: "data", streamId: 7, flags: flagFin, data: Buffer.from("hello") },
  {
    type: "synStream",
    streamId: 1,
    associatedStreamId: 0,
    priority: 3,
    flags: 0,
    headerBlock: Buffer.from([1, 2]),
  },
  { type: "synReply", streamId: 1, flags: flagFin, headerBlock: Buffer.from([3]) },
  { type: "headers", streamId: 3, flags: 0, headerBlock: Buffer.alloc(0) },
  { type: "rstStream", streamId: 5, status: 3 },
  { type: "settings", flags: 0, entries: [{ flags: 1, id: 7, value: 1 << 20 }] },
  { type: "ping", id: 0xfffffffd },
  { type: "goAway", lastGoodStreamId: 9, status: 0 },
  { type: "windowUpdate", streamId: 0, delta: 0x7fffffff },
];

describe("SPDY frame codec", () => {
  for (const frame of everyKind) {
    it(`round-trips ${frame.type}`, () => {
      assert.deepEqual(decodeFrame(encodeFrame(frame)), frame);
    });
  }

  it("writes control frames with the version and type the spec puts first", () => {
    const ping = encodeFrame({ type: "ping", id: 1 });
    assert.equal(ping.toString("hex"), "80030006000000040000" + "0001");
  });

  it("refuses another SPDY version with a protocol error", () => {
    const ping = encodeFrame({ type: "ping", id: 1 });
    ping.writeUInt16BE(0x8002, 0);
    assert.throws(() => decodeFrame(ping), SpdyProtocolError);
  });

  it("refuses a truncated RST_STREAM and a SETTINGS whose count lies", () => {
    const rst = encodeFrame({ type: "rstStream", streamId: 1, status: 1 });
    rst.writeUInt32BE(4, 4);
    assert.throws(() => decodeFrame(rst.subarray(0, 12)), /RST_STREAM frame of 4 bytes/);
    const settings = encodeFrame({ type: "settings", flags: 0, entries: [] });
    settings.writeUInt32BE(3, 8);
    assert.throws(() => decodeFrame(settings), /cannot hold 3 entries/);
  });

  it("ignores control frame types it does not know, as the spec says", () => {
    const unknown = encodeFrame({ type: "ping", id: 1 });
    unknown.writeUInt16BE(0x00ff, 2);
    assert.equal(decodeFrame(unknown), undefined);
  });

  it("cuts a byte stream into frames whatever the chunking", () => {
    const wire = Buffer.concat(everyKind.map(encodeFrame));
    for (const chunkSize of [1, 3, 8, 64, wire.length]) {
      const reader = new FrameReader();
      const frames: Buffer[] = [];
      for (let at = 0; at < wire.length; at += chunkSize)
        frames.push(...reader.push(wire.subarray(at, at + chunkSize)));
      assert.deepEqual(frames.map(decodeFrame), everyKind, `chunks of ${chunkSize}`);
    }
  });
});

describe("SPDY header blocks", () => {
  it("keeps the spec's dictionary", () => {
    assert.equal(headerDictionary.length, headerDictionaryLength);
    assert.ok(headerDictionary.includes(Buffer.from("content-type")));
  });

  it("round-trips names in lower case and several values NUL-separated", () => {
    const headers = spdyHeaders({ streamType: "stdout", Accept: ["a", "b"] });
    assert.deepEqual(
      decodeHeaderBlock(encodeHeaderBlock(headers)),
      new Map([
        ["streamtype", ["stdout"]],
        ["accept", ["a", "b"]],
      ]),
    );
  });

  it("refuses a block whose lengths run past its end", () => {
    const block = encodeHeaderBlock(spdyHeaders({ port: "80" }));
    assert.throws(() => decodeHeaderBlock(block.subarray(0, block.length - 1)), SpdyProtocolError);
  });

  it("compresses across frames with one zlib context per direction", async () => {
    const compressor = new HeaderCompressor();
    const decompressor = new HeaderDecompressor();
    const sent = ["error", "stdin", "stdout", "stderr"].map((type, i) =>
      spdyHeaders({ streamType: type, n: `${i}` }),
    );
    const blocks: Buffer[] = [];
    for (const headers of sent) blocks.push(await compressor.compress(headers));
    // Later blocks lean on earlier ones, so they come out smaller than the first ...
    assert.ok(blocks.every((b, i) => i === 0 || b.length < (blocks[0]?.length ?? 0)));
    // ... and only decompress in order, through the same context.
    for (const [i, block] of blocks.entries())
      assert.deepEqual(await decompressor.decompress(block), sent[i]);
    await assert.rejects(
      new HeaderDecompressor().decompress(blocks[2] ?? Buffer.alloc(0)),
      SpdyProtocolError,
    );
    compressor.close();
    decompressor.close();
  });
});
