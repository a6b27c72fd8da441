// Builds netlink messages into one growing buffer: headers in host byte order (little-endian on
// every platform this runs on), attributes padded to 4 bytes, nf_tables' integers big-endian.
import {
  AF_INET,
  NFNL_MSG_BATCH_BEGIN,
  NFNL_MSG_BATCH_END,
  NFNL_SUBSYS_NFTABLES,
  NLA_F_NESTED,
  NLM_F_REQUEST,
} from "./constants.js";

const NLMSG_HDRLEN = 16;
const NFGENMSG_LEN = 4;

const align4 = (n: number) => (n + 3) & ~3;

export class NetlinkWriter {
  #buf: Buffer;
  #len = 0;
  #message = -1;
  readonly #nests: number[] = [];

  constructor(initialBytes = 64 * 1024) {
    this.#buf = Buffer.alloc(initialBytes);
  }

  #reserve(bytes: number): void {
    if (this.#len + bytes <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#len + bytes) size *= 2;
    const next = Buffer.alloc(size);
    this.#buf.copy(next, 0, 0, this.#len);
    this.#buf = next;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#len;
  }

  /** Starts an nf_tables message: nlmsghdr plus nfgenmsg. */
  begin(type: number, flags: number, seq: number, family: number, resId = 0): void {
    if (this.#message >= 0) throw new Error("netlink: message not ended");
    this.#reserve(NLMSG_HDRLEN + NFGENMSG_LEN);
    const b = this.#buf;
    const at = this.#len;
    this.#message = at;
    // nlmsghdr: length (filled in by end()), type, flags, sequence, port 0; then nfgenmsg
    for (let i = at; i < at + NLMSG_HDRLEN + NFGENMSG_LEN; i++) b[i] = 0;
    this.#u16(at + 4, type);
    this.#u16(at + 6, flags | NLM_F_REQUEST);
    b[at + 8] = seq & 0xff;
    b[at + 9] = (seq >>> 8) & 0xff;
    b[at + 10] = (seq >>> 16) & 0xff;
    b[at + 11] = (seq >>> 24) & 0xff;
    b[at + 16] = family;
    b[at + 18] = resId >>> 8;
    b[at + 19] = resId & 0xff;
    this.#len += NLMSG_HDRLEN + NFGENMSG_LEN;
  }

  end(): void {
    if (this.#message < 0 || this.#nests.length > 0) throw new Error("netlink: unbalanced message");
    this.#buf.writeUInt32LE(this.#len - this.#message, this.#message);
    this.#message = -1;
  }

  /** The batch brackets nfnetlink wants around nf_tables changes. */
  batchBegin(seq: number): void {
    this.begin(NFNL_MSG_BATCH_BEGIN, 0, seq, 0, NFNL_SUBSYS_NFTABLES);
    this.end();
  }

  batchEnd(seq: number): void {
    this.begin(NFNL_MSG_BATCH_END, 0, seq, 0, NFNL_SUBSYS_NFTABLES);
    this.end();
  }

  #u16(at: number, value: number): void {
    const b = this.#buf;
    b[at] = value & 0xff;
    b[at + 1] = value >>> 8;
  }

  #header(type: number, payload: number): number {
    this.#reserve(4 + align4(payload));
    const at = this.#len;
    this.#u16(at, 4 + payload);
    this.#u16(at + 2, type);
    return at + 4;
  }

  /** Ends an attribute of `payload` bytes, zeroing its padding. */
  #close(payload: number): void {
    const b = this.#buf;
    const end = this.#len + 4 + align4(payload);
    for (let i = this.#len + 4 + payload; i < end; i++) b[i] = 0;
    this.#len = end;
  }

  /** A NUL-terminated string. */
  str(type: number, text: string): void {
    // Names and comments are nearly always ASCII: copy them without an encoder call.
    let ascii = text.length < 64;
    for (let i = 0; ascii && i < text.length; i++) ascii = text.charCodeAt(i) < 0x80;
    const bytes = ascii ? text.length : Buffer.byteLength(text);
    const at = this.#header(type, bytes + 1);
    const b = this.#buf;
    if (ascii) for (let i = 0; i < bytes; i++) b[at + i] = text.charCodeAt(i);
    else b.write(text, at, "utf8");
    b[at + bytes] = 0;
    this.#close(bytes + 1);
  }

  /** A string encoded once with `cString`, for names written into every message. */
  cstr(type: number, encoded: Uint8Array): void {
    const at = this.#header(type, encoded.length);
    this.#buf.set(encoded, at);
    this.#close(encoded.length);
  }

  u32(type: number, value: number): void {
    const at = this.#header(type, 4);
    const b = this.#buf;
    const v = value >>> 0;
    b[at] = v >>> 24;
    b[at + 1] = (v >>> 16) & 0xff;
    b[at + 2] = (v >>> 8) & 0xff;
    b[at + 3] = v & 0xff;
    this.#len = at + 4;
  }

  u64(type: number, value: number): void {
    const at = this.#header(type, 8);
    this.#buf.writeBigUInt64BE(BigInt(value), at);
    this.#close(8);
  }

  u8(type: number, value: number): void {
    const at = this.#header(type, 1);
    this.#buf[at] = value;
    this.#close(1);
  }

  bytes(type: number, data: Uint8Array): void {
    const at = this.#header(type, data.length);
    this.#buf.set(data, at);
    this.#close(data.length);
  }

  /**
   * `type { NFTA_DATA_VALUE[len] }` with the value's bytes zeroed; returns where they start in
   * `buffer`, for the caller to fill in place (no per-value allocation).
   */
  valueAt(type: number, len: number): number {
    this.#reserve(8 + align4(len));
    const b = this.#buf;
    const at = this.#len;
    this.#u16(at, 8 + align4(len));
    this.#u16(at + 2, type | NLA_F_NESTED);
    this.#u16(at + 4, 4 + len);
    this.#u16(at + 6, 1);
    const end = at + 8 + align4(len);
    for (let i = at + 8; i < end; i++) b[i] = 0;
    this.#len = end;
    return at + 8;
  }

  /** The buffer being written; valid until the next write (which may replace it). */
  get buffer(): Buffer {
    return this.#buf;
  }

  nest(type: number): void {
    this.#reserve(4);
    this.#nests.push(this.#len);
    this.#u16(this.#len + 2, type | NLA_F_NESTED);
    this.#len += 4;
  }

  endNest(): void {
    const at = this.#nests.pop();
    if (at === undefined) throw new Error("netlink: no open nest");
    this.#u16(at, this.#len - at);
  }

  /** Bytes of the open nest so far; a writer splits long element lists by it (nla_len is 16 bits). */
  nestLength(): number {
    const at = this.#nests.at(-1);
    return at === undefined ? 0 : this.#len - at;
  }

  /** The messages written, as one buffer (a view; the writer must not be used after). */
  finish(): Buffer {
    if (this.#message >= 0) throw new Error("netlink: message not ended");
    return this.#buf.subarray(0, this.#len);
  }
}

/** NUL-terminated UTF-8, for `NetlinkWriter.cstr`. */
export function cString(text: string): Uint8Array {
  return Buffer.from(`${text}\0`, "utf8");
}

/** nfgenmsg family of a table family. */
export function familyNumber(family: "ip" | "ip6" | "inet"): number {
  return family === "ip" ? AF_INET : family === "ip6" ? 10 : 1;
}
