// sha256 + RFC 4648 base32, the hash behind every kube-proxy per-service chain name.
import { createHash } from "node:crypto";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

export function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out.padEnd(Math.ceil(out.length / 8) * 8, "=");
}

/** The first `length` base32 characters of sha256(text). */
export function sha256Base32(text: string, length: number): string {
  return base32(createHash("sha256").update(text).digest()).slice(0, length);
}
