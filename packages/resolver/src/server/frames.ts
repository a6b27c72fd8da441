/**
 * Splits a TCP byte stream into DNS messages: each is preceded by its length as two big-endian bytes
 * (RFC 1035 4.2.2). Chunks may hold half a message or several.
 */
export class FrameSplitter {
  private pending: Buffer = Buffer.alloc(0);

  /** Adds bytes; returns every message now complete, in order. */
  push(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: Buffer[] = [];
    for (;;) {
      if (this.pending.length < 2) break;
      const length = this.pending.readUInt16BE(0);
      if (this.pending.length < 2 + length) break;
      frames.push(Buffer.from(this.pending.subarray(2, 2 + length)));
      this.pending = this.pending.subarray(2 + length);
    }
    return frames;
  }

  /** Bytes of an incomplete message still waiting. */
  get buffered(): number {
    return this.pending.length;
  }
}

export function frame(message: Buffer): Buffer {
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(message.length);
  return Buffer.concat([prefix, message]);
}
