/** Small chunks are joined while they stay small, so a client sending a byte at a time costs few objects. */
const SMALL_CHUNK = 1024;

/**
 * Splits a TCP byte stream into DNS messages: each is preceded by its length as two big-endian bytes
 * (RFC 1035 4.2.2). Chunks may hold half a message or several. The chunks are kept as they came (not copied
 * into one buffer), and each message is copied out when taken.
 */
export class FrameSplitter {
  private readonly chunks: Buffer[] = [];
  /** Bytes of chunks[0] already taken. */
  private offset = 0;
  private size = 0;

  /** Adds bytes; returns every message now complete, in order. */
  push(chunk: Buffer): Buffer[] {
    this.append(chunk);
    const frames: Buffer[] = [];
    for (let f = this.take(); f; f = this.take()) frames.push(f);
    return frames;
  }

  /** Adds bytes without taking anything out (a server reads one message at a time with take()). */
  append(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const last = this.chunks.length - 1;
    const tail = this.chunks[last];
    // Joining keeps the bytes in front of `offset` in place, so chunks[0] may be joined too.
    if (tail && tail.length < SMALL_CHUNK && chunk.length < SMALL_CHUNK)
      this.chunks[last] = Buffer.concat([tail, chunk]);
    else this.chunks.push(chunk);
    this.size += chunk.length;
  }

  /** The first complete message (a copy), removed from the buffer; undefined while none is complete. */
  take(): Buffer | undefined {
    const length = this.nextLength();
    if (length === undefined || this.size < 2 + length) return undefined;
    this.skip(2);
    const message = Buffer.allocUnsafe(length);
    for (let copied = 0; copied < length; ) {
      const head = this.chunks[0] as Buffer;
      const n = Math.min(head.length - this.offset, length - copied);
      head.copy(message, copied, this.offset, this.offset + n);
      copied += n;
      this.skip(n);
    }
    return message;
  }

  /** Whether a whole message is buffered. */
  get complete(): boolean {
    const length = this.nextLength();
    return length !== undefined && this.size >= 2 + length;
  }

  /** Bytes buffered: messages not taken yet and the start of an incomplete one. */
  get buffered(): number {
    return this.size;
  }

  private nextLength(): number | undefined {
    if (this.size < 2) return undefined;
    return (this.byteAt(0) << 8) | this.byteAt(1);
  }

  private byteAt(index: number): number {
    let i = this.offset + index;
    for (const chunk of this.chunks) {
      if (i < chunk.length) return chunk[i] as number;
      i -= chunk.length;
    }
    return 0;
  }

  /** Drops `n` bytes from the front (never more than the first chunk holds past offset). */
  private skip(n: number): void {
    let left = n;
    while (left > 0) {
      const head = this.chunks[0] as Buffer;
      const step = Math.min(left, head.length - this.offset);
      this.offset += step;
      this.size -= step;
      left -= step;
      if (this.offset === head.length) {
        this.chunks.shift();
        this.offset = 0;
      }
    }
  }
}

/** A message with its 2-byte length in front, in one buffer. */
export function frame(message: Buffer): Buffer {
  const out = Buffer.allocUnsafe(2 + message.length);
  out.writeUInt16BE(message.length);
  message.copy(out, 2);
  return out;
}
