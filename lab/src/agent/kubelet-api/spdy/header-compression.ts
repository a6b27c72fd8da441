/**
 * SPDY header blocks are one zlib stream per direction per connection, primed with the spec's dictionary and
 * sync-flushed after each block: a block can only be read after every earlier one, so each connection owns one
 * HeaderCompressor (what it sends) and one HeaderDecompressor (what it receives), used strictly in frame order.
 */
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from "node:zlib";
import { headerDictionary } from "./dictionary.js";
import { SpdyProtocolError } from "./frames.js";
import { decodeHeaderBlock, encodeHeaderBlock, type SpdyHeaders } from "./header-block.js";

/** Inflated header blocks beyond this are refused, so a small frame cannot expand into a memory bomb. */
const maxInflatedHeaderBytes = 256 * 1024;

/** Runs one zlib transform a block at a time: writes the block, sync-flushes, and returns what came out. */
class SyncFlushedZlib {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private failure: Error | undefined;
  /** Rejects the block in flight: after an error zlib never calls the flush callback. */
  private rejectInFlight: ((err: Error) => void) | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly zlib: Deflate | Inflate,
    private readonly maxOutput: number,
  ) {
    zlib.on("data", (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.bytes += chunk.length;
    });
    zlib.on("error", (err) => {
      this.failure = err;
      this.rejectInFlight?.(err);
    });
  }

  /** Blocks are processed in call order; a zlib error poisons the context for good, as the stream is then lost. */
  transform(block: Buffer): Promise<Buffer> {
    const result = this.queue.then(() => this.transformNow(block));
    this.queue = result.catch(() => {});
    return result;
  }

  private transformNow(block: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.chunks = [];
      this.bytes = 0;
      this.rejectInFlight = reject;
      this.zlib.write(block);
      this.zlib.flush(constants.Z_SYNC_FLUSH, () => {
        this.rejectInFlight = undefined;
        if (this.failure) return reject(this.failure);
        if (this.bytes > this.maxOutput) {
          this.failure = new Error(`header block inflates past ${this.maxOutput} bytes`);
          return reject(this.failure);
        }
        resolve(Buffer.concat(this.chunks, this.bytes));
      });
    });
  }

  close(): void {
    this.failure ??= new Error("header compression context closed");
    this.rejectInFlight?.(this.failure);
    this.zlib.close();
  }
}

export class HeaderCompressor {
  private readonly zlib = new SyncFlushedZlib(
    createDeflate({ dictionary: headerDictionary, level: constants.Z_DEFAULT_COMPRESSION }),
    Number.POSITIVE_INFINITY,
  );

  compress(headers: SpdyHeaders): Promise<Buffer> {
    return this.zlib.transform(encodeHeaderBlock(headers));
  }

  close(): void {
    this.zlib.close();
  }
}

export class HeaderDecompressor {
  private readonly zlib = new SyncFlushedZlib(
    createInflate({ dictionary: headerDictionary }),
    maxInflatedHeaderBytes,
  );

  /** Throws SpdyProtocolError for a block that does not inflate or parse. */
  async decompress(block: Buffer): Promise<SpdyHeaders> {
    let raw: Buffer;
    try {
      raw = await this.zlib.transform(block);
    } catch (err) {
      throw new SpdyProtocolError(`header block does not inflate: ${(err as Error).message}`);
    }
    return decodeHeaderBlock(raw);
  }

  close(): void {
    this.zlib.close();
  }
}
