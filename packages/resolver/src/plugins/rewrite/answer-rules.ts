import type { ResourceRecord } from "../../wire/message.js";
import type { ResponseRule } from "./rule.js";
import type { StringRewriter } from "./strings.js";

/** Rewrites the owner name of every record in the reply. */
export function ownerNameRule(rewrite: StringRewriter): ResponseRule {
  return {
    apply(_reply, rr) {
      if (rr) rr.name = rewrite(rr.name);
    },
  };
}

/** Rewrites the name a record points at (CNAME target, SRV target, MX exchange, ...). */
export function valueRule(rewrite: StringRewriter): ResponseRule {
  return {
    apply(_reply, rr) {
      if (!rr) return;
      const value = pointedName(rr);
      if (value === undefined || value === "") return;
      const changed = rewrite(value);
      if (changed !== value) setPointedName(rr, changed);
    },
  };
}

/**
 * The name in a record's data that upstream's value rewrites touch. NAPTR is among them upstream; this
 * package keeps NAPTR data as opaque bytes, so its replacement is left alone.
 */
function pointedName(rr: ResourceRecord): string | undefined {
  switch (rr.type) {
    case "CNAME":
    case "NS":
    case "DNAME":
    case "PTR":
      return rr.data;
    case "SRV":
      return rr.data.target;
    case "MX":
      return rr.data.exchange;
    case "SOA":
      return rr.data.mname;
    default:
      return undefined;
  }
}

/** Writes the name back; record data objects are replaced, not edited, since a cache may share them. */
function setPointedName(rr: ResourceRecord, value: string): void {
  switch (rr.type) {
    case "CNAME":
    case "NS":
    case "DNAME":
    case "PTR":
      rr.data = value;
      break;
    case "SRV":
      rr.data = { ...rr.data, target: value };
      break;
    case "MX":
      rr.data = { ...rr.data, exchange: value };
      break;
    case "SOA":
      rr.data = { ...rr.data, mname: value };
      break;
  }
}
