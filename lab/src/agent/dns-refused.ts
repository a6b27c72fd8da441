const REFUSED = 5;

/**
 * A REFUSED reply to a DNS query: the query's id, opcode, RD bit and question, QR and RA set, no records.
 * Undefined for anything that is not a well-formed one-question query.
 */
export function refusedAnswer(query: Buffer): Buffer | undefined {
  if (query.length < 12 || (query[2] ?? 0) & 0x80 || query.readUInt16BE(4) !== 1) return undefined;
  let at = 12;
  while (at < query.length) {
    const len = query[at] ?? 0;
    if (len === 0) break;
    if (len >= 0xc0) return undefined;
    at += len + 1;
  }
  const end = at + 1 + 4;
  if (end > query.length) return undefined;
  const out = Buffer.from(query.subarray(0, end));
  out[2] = 0x80 | ((query[2] ?? 0) & 0x79);
  out[3] = 0x80 | REFUSED;
  out.writeUInt16BE(0, 6);
  out.writeUInt16BE(0, 8);
  out.writeUInt16BE(0, 10);
  return out;
}
