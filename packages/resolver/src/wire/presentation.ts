import { className, typeName } from "./constants.js";
import type { ResourceRecord } from "./message.js";
import { fqdn } from "./name.js";

/** One record as a zone-file line: `owner TTL CLASS TYPE RDATA`, single spaces. */
export function formatRecord(rr: ResourceRecord): string {
  return `${rr.name} ${rr.ttl} ${className(rr.class)} ${rr.type} ${formatRdata(rr)}`;
}

export function formatRdata(rr: ResourceRecord): string {
  switch (rr.type) {
    case "A":
    case "AAAA":
    case "CNAME":
    case "PTR":
    case "NS":
    case "DNAME":
      return rr.data;
    case "MX":
      return `${rr.data.preference} ${rr.data.exchange}`;
    case "SRV":
      return `${rr.data.priority} ${rr.data.weight} ${rr.data.port} ${rr.data.target}`;
    case "SOA": {
      const s = rr.data;
      return `${s.mname} ${s.rname} ${s.serial} ${s.refresh} ${s.retry} ${s.expire} ${s.minimum}`;
    }
    case "TXT":
      return rr.data.map((b) => JSON.stringify(b.toString("latin1"))).join(" ");
    default:
      return `\\# ${rr.data.length} ${rr.data.toString("hex")}`;
  }
}

export class RecordSyntaxError extends Error {
  override name = "RecordSyntaxError";
}

/**
 * Parses one zone-file line as written in tests and docs (`svc.ns.svc.cluster.local. 30 IN A 10.0.0.1`).
 * Owner, TTL and class are required; only the types this package answers with are understood.
 */
export function parseRecord(line: string): ResourceRecord {
  const fields = tokenize(line);
  const [owner, ttlText, cls, type, ...rdata] = fields;
  const fail = (why: string) => new RecordSyntaxError(`${why} in record ${JSON.stringify(line)}`);
  if (!owner || !ttlText || !cls || !type) throw fail("too few fields");
  if (!/^\d+$/.test(ttlText)) throw fail(`bad TTL ${ttlText}`);
  if (cls.toUpperCase() !== "IN") throw fail(`class ${cls} is not IN`);
  const base = { name: fqdn(owner), class: 1, ttl: Number(ttlText) };
  const num = (i: number) => {
    const v = rdata[i];
    if (v === undefined || !/^\d+$/.test(v)) throw fail(`rdata field ${i + 1} is not a number`);
    return Number(v);
  };
  const str = (i: number) => {
    const v = rdata[i];
    if (v === undefined) throw fail(`rdata field ${i + 1} is missing`);
    return v;
  };
  switch (type.toUpperCase()) {
    case "A":
      return { ...base, type: "A", data: str(0) };
    case "AAAA":
      return { ...base, type: "AAAA", data: str(0) };
    case "CNAME":
      return { ...base, type: "CNAME", data: fqdn(str(0)) };
    case "PTR":
      return { ...base, type: "PTR", data: fqdn(str(0)) };
    case "NS":
      return { ...base, type: "NS", data: fqdn(str(0)) };
    case "MX":
      return { ...base, type: "MX", data: { preference: num(0), exchange: fqdn(str(1)) } };
    case "SRV":
      return {
        ...base,
        type: "SRV",
        data: { priority: num(0), weight: num(1), port: num(2), target: fqdn(str(3)) },
      };
    case "SOA":
      return {
        ...base,
        type: "SOA",
        data: {
          mname: fqdn(str(0)),
          rname: fqdn(str(1)),
          serial: num(2),
          refresh: num(3),
          retry: num(4),
          expire: num(5),
          minimum: num(6),
        },
      };
    case "TXT":
      return { ...base, type: "TXT", data: rdata.map((s) => Buffer.from(s, "latin1")) };
    default:
      throw fail(`unsupported type ${type}`);
  }
}

/** Splits on blanks; double-quoted strings are one field, quotes removed. */
function tokenize(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) {
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? ""));
  }
  return out;
}

/** Type name for a question, for logs and errors. */
export function questionText(q: { name: string; type: number; class: number }): string {
  return `${q.name} ${className(q.class)} ${typeName(q.type)}`;
}
