import { isIP } from "node:net";
import { parseGoDuration } from "@switchyard/basics";
import type { IntKind, Kind } from "./flag-spec.js";
import { parseGoBool, parseGoBoolMap, parseGoFloat, parseGoInt } from "./go-values.js";

/** A value read, or why it was refused. */
export type ReadResult = { readonly value: unknown } | { readonly invalid: string };

const PLAIN_BOOLS: Readonly<Record<string, boolean>> = { true: true, "1": true, false: false, "0": false };

function readBool(raw: string, plain: boolean): boolean | undefined {
  return plain ? PLAIN_BOOLS[raw] : parseGoBool(raw);
}

function readInt(kind: IntKind, raw: string): ReadResult {
  const syntax = kind.min < 0 ? /^-?\d+$/ : /^\d+$/;
  const n = kind.decimal ? (syntax.test(raw) ? Number(raw) : undefined) : parseGoInt(raw);
  if (n === undefined || n < kind.min || n > kind.max) {
    return { invalid: `must be an integer from ${kind.min} to ${kind.max}` };
  }
  return { value: n };
}

/** Reads one raw value by its kind; bools by strconv.ParseBool unless `plainBools`. */
export function readValue(kind: Kind, raw: string, plainBools: boolean): ReadResult {
  const refused = (invalid: string, value: unknown): ReadResult =>
    value === undefined ? { invalid } : { value };
  if (typeof kind === "object") {
    return "read" in kind ? refused(kind.invalid, kind.read(raw)) : readInt(kind, raw);
  }
  switch (kind) {
    case "string":
      return { value: raw };
    case "bool":
      return refused("want true or false", readBool(raw, plainBools));
    case "duration":
      // Go's flag library takes negative durations too; a flag that must not be negative checks that itself.
      return refused("want a duration such as 500ms or 1s", parseGoDuration(raw));
    case "float":
      return refused("want a number", parseGoFloat(raw));
    case "ip":
      return refused("want an IP address", isIP(raw) === 0 ? undefined : raw);
    case "list":
      return { value: raw === "" ? [] : raw.split(",").map((s) => s.trim()) };
    case "bool-map": {
      const map = parseGoBoolMap(raw);
      return typeof map === "string" ? { invalid: map } : { value: map };
    }
  }
}
