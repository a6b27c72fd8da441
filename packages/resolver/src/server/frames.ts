/**
 * Splits a TCP byte stream into DNS messages: each is preceded by its length as two big-endian bytes
 * (RFC 1035 4.2.2). Chunks may hold half a message or several.
 */
export class FrameSplitter {
  private pending: Buffer = Buffer.alloc(0);

  /** Adds bytes; returns every message now complete, in order. */
  push(chunk: Buffer): Buffer[] {
    this.append(chunk);
    const frames: Buffer[] = [];
    for (let f = this.take(); f; f = this.take()) frames.push(f);
    return frames;
  }

  /** Adds bytes without taking anything out (a server reads one message at a time with take()). */
  append(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
  }

  /** The first complete message (a copy), removed from the buffer; undefined while none is complete. */
  take(): Buffer | undefined {
    if (!this.complete) return undefined;
    const length = this.pending.readUInt16BE(0);
    const message = Buffer.from(this.pending.subarray(2, 2 + length));
    this.pending = this.pending.subarray(2 + length);
    return message;
  }

  /** Whether a whole message is buffered. */
  get complete(): boolean {
    return this.pending.length >= 2 && this.pending.length >= 2 + this.pending.readUInt16BE(0);
  }

  /** Bytes buffered: messages not taken yet and the start of an incomplete one. */
  get buffered(): number {
    return this.pending.length;
  }
}

export function frame(message: Buffer): Buffer {
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(message.length);
  return Buffer.concat([prefix, message]);
}
