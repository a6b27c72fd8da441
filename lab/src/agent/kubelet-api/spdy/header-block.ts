/**
 * The uncompressed SPDY/3 name/value header block: a 32-bit pair count, then each name and value as a 32-bit
 * length and bytes. Names are lower case on the wire; several values of one name travel NUL-separated.
 */
import { SpdyProtocolError } from "./frames.js";

/** Header names (lower case) to their values. */
export type SpdyHeaders = Map<string, string[]>;

export function spdyHeaders(record: Record<string, string | string[]> = {}): SpdyHeaders {
  return new Map(
    Object.entries(record).map(([name, value]) => [
      name.toLowerCase(),
      Array.isArray(value) ? value : [value],
    ]),
  );
}

/** The first value of a header, looked up case-insensitively as SPDY names are lower case. */
export function headerValue(headers: SpdyHeaders, name: string): string | undefined {
  return headers.get(name.toLowerCase())?.[0];
}

export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [u32(headers.size)];
  for (const [name, values] of headers) {
    const nameBytes = Buffer.from(name.toLowerCase());
    const valueBytes = Buffer.from(values.join("\0"));
    parts.push(u32(nameBytes.length), nameBytes, u32(valueBytes.length), valueBytes);
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const reader = new BlockReader(block);
  const count = reader.u32();
  const headers: SpdyHeaders = new Map();
  for (let i = 0; i < count; i++) {
    const name = reader.bytes().toString().toLowerCase();
    const values = reader.bytes().toString().split("\0");
    if (name === "") throw new SpdyProtocolError("header block has an empty header name");
    if (headers.has(name)) throw new SpdyProtocolError(`header block repeats header ${name}`);
    headers.set(name, values);
  }
  if (!reader.atEnd()) throw new SpdyProtocolError("header block has bytes after its last header");
  return headers;
}

function u32(value: number): Buffer {
  const buf = Buffer.alloc(4);
  buf.writeUInt32BE(value);
  return buf;
}

class BlockReader {
  private offset = 0;
  constructor(private readonly block: Buffer) {}

  u32(): number {
    if (this.offset + 4 > this.block.length) throw new SpdyProtocolError("header block ends inside a length");
    const value = this.block.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  bytes(): Buffer {
    const length = this.u32();
    if (this.offset + length > this.block.length) {
      throw new SpdyProtocolError(`header block ends inside a ${length}-byte string`);
    }
    const out = this.block.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  atEnd(): boolean {
    return this.offset === this.block.length;
  }
}
