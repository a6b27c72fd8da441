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

// Every sync names the same chains again; hashing 100k endpoint chains costs about a second,
// so names are remembered (kube-proxy keeps them on its endpoint objects for the same reason).
// Cleared when it grows past a bound rather than tracked per object: stale names are cheap.
const MEMO_LIMIT = 1 << 20;
const memo = new Map<string, string>();

/** The first `length` base32 characters of sha256(text). */
export function sha256Base32(text: string, length: number): string {
  const key = `${length}:${text}`;
  const known = memo.get(key);
  if (known !== undefined) return known;
  // 5 bits per character: only the digest bytes that reach the output are encoded.
  const digest = createHash("sha256").update(text).digest();
  const name = base32(digest.subarray(0, Math.ceil((length * 5) / 8))).slice(0, length);
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(key, name);
  return name;
}
