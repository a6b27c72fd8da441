/**
 * Domain names in presentation form: absolute, with a trailing dot, and `\DDD` / `\.` escapes for bytes
 * that are not plain label characters. Keeping the escapes (rather than decoding labels as UTF-8) lets a
 * question with binary or mixed-case labels be echoed back byte for byte.
 */

export class NameError extends Error {
  override name = "NameError";
}

const MAX_LABEL = 63;
const MAX_NAME = 255;

/** Splits a presentation name into raw labels; throws NameError on an empty or oversized label. */
export function nameToLabels(name: string): Buffer[] {
  if (name === "." || name === "") return [];
  const labels: Buffer[] = [];
  let current: number[] = [];
  let wire = 1;
  for (let i = 0; i < name.length; i++) {
    const ch = name.charCodeAt(i);
    if (ch === 0x5c /* \ */) {
      const digits = name.slice(i + 1, i + 4);
      if (/^\d{3}$/.test(digits)) {
        const value = Number(digits);
        if (value > 255) throw new NameError(`bad escape \\${digits} in ${JSON.stringify(name)}`);
        current.push(value);
        i += 3;
      } else if (i + 1 < name.length) {
        current.push(name.charCodeAt(i + 1));
        i += 1;
      } else {
        throw new NameError(`dangling backslash in ${JSON.stringify(name)}`);
      }
    } else if (ch === 0x2e /* . */) {
      if (current.length === 0) throw new NameError(`empty label in ${JSON.stringify(name)}`);
      labels.push(finishLabel(current, name));
      wire += current.length + 1;
      current = [];
    } else if (ch > 0x7f) {
      for (const b of Buffer.from(name[i] ?? "", "utf8")) current.push(b);
    } else {
      current.push(ch);
    }
  }
  if (current.length > 0) {
    labels.push(finishLabel(current, name));
    wire += current.length + 1;
  }
  if (wire > MAX_NAME) throw new NameError(`name longer than ${MAX_NAME} bytes: ${JSON.stringify(name)}`);
  return labels;
}

function finishLabel(bytes: number[], name: string): Buffer {
  if (bytes.length > MAX_LABEL) {
    throw new NameError(`label longer than ${MAX_LABEL} bytes in ${JSON.stringify(name)}`);
  }
  return Buffer.from(bytes);
}

/** Renders raw labels as an absolute presentation name. */
export function labelsToName(labels: readonly Buffer[]): string {
  if (labels.length === 0) return ".";
  return `${labels.map(labelToText).join(".")}.`;
}

function labelToText(label: Buffer): string {
  let out = "";
  for (const b of label) {
    if (b === 0x2e || b === 0x5c || b === 0x22 || b === 0x28 || b === 0x29 || b === 0x3b || b === 0x40) {
      out += `\\${String.fromCharCode(b)}`;
    } else if (b < 0x21 || b > 0x7e) {
      out += `\\${String(b).padStart(3, "0")}`;
    } else {
      out += String.fromCharCode(b);
    }
  }
  return out;
}

/** Makes a name absolute by adding the trailing dot. */
export function fqdn(name: string): string {
  return name.endsWith(".") && !name.endsWith("\\.") ? name : `${name}.`;
}

const UPPER = /[A-Z]/;

/** ASCII-only lower case: DNS names compare case-insensitively in ASCII only (RFC 4343). */
export function lowerName(name: string): string {
  // Names are nearly always lower case already; testing first keeps the common case free of garbage.
  return UPPER.test(name) ? name.replace(/[A-Z]/g, (c) => c.toLowerCase()) : name;
}

export function namesEqual(a: string, b: string): boolean {
  return lowerName(fqdn(a)) === lowerName(fqdn(b));
}

/** Whether `name` is `zone` or below it. Both absolute; compared case-insensitively on label boundaries. */
export function isSubdomain(name: string, zone: string): boolean {
  const z = lowerName(fqdn(zone));
  if (z === ".") return true;
  const n = lowerName(fqdn(name));
  if (n.length === z.length) return n === z;
  // below the zone: ends with it, right after a label boundary (no `.${z}` string per call)
  return n.length > z.length && n.endsWith(z) && n.charCodeAt(n.length - z.length - 1) === 46;
}

/**
 * The labels of `name` left of `zone`, in query case, without a trailing dot; "" at the apex.
 * Assumes isSubdomain(name, zone).
 */
export function trimZone(name: string, zone: string): string {
  const n = fqdn(name);
  const z = fqdn(zone);
  if (z === ".") return n === "." ? "" : n.slice(0, -1);
  if (n.length === z.length) return "";
  return n.slice(0, n.length - z.length - 1);
}

/** The suffix of `name` that spells `zone`, keeping the query's case (CoreDNS echoes it in answers). */
export function zoneInQueryCase(name: string, zone: string): string {
  const n = fqdn(name);
  const z = fqdn(zone);
  if (z === ".") return ".";
  return n.slice(n.length - z.length);
}

/** Splits a relative name (no trailing dot) into labels, keeping escapes as written. */
export function splitLabels(relative: string): string[] {
  if (relative === "") return [];
  return relative.split(/(?<!\\)\./);
}

/** Joins labels (and an absolute zone) into one absolute name. */
export function joinName(...parts: string[]): string {
  const kept = parts.filter((p) => p !== "" && p !== ".").map((p) => (p.endsWith(".") ? p.slice(0, -1) : p));
  return kept.length === 0 ? "." : `${kept.join(".")}.`;
}
