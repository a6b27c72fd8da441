/**
 * Go's comparison builtins (`eq ne lt le gt ge`) and truth (`not`, `if`, `and`, `or`) over the values a
 * template handles. Signed and unsigned integers compare with each other, as Go allows since 1.18.
 */
import type { Value } from "./tmpl-value.js";
import { ExecError, goType, printValue } from "./tmpl-value.js";

type Kind = "bool" | "int" | "uint" | "string" | "other";

function kindOf(v: Value): Kind {
  if (v.t === "int") return v.go === "int" ? "int" : "uint";
  if (v.t === "bool" || v.t === "string") return v.t;
  return "other";
}

/** Go's isTrue: empty strings, slices and maps, zero numbers, false and missing values are false. */
export function truth(v: Value): boolean {
  switch (v.t) {
    case "string":
      return v.v.length > 0;
    case "int":
      return v.v !== 0n;
    case "bool":
      return v.v;
    case "slice":
      return v.v.length > 0;
    case "map":
      return v.v.size > 0;
    case "question":
    case "data":
      return true;
    case "none":
      return false;
  }
}

/** Go's eq for one pair; `name` is the builtin called, for the error. */
function equal(name: string, a: Value, b: Value): boolean {
  // A missing value is Go's nil: equal to another missing one, unequal to anything else, never an error.
  if (a.t === "none" || b.t === "none") return a.t === b.t;
  const ka = kindOf(a);
  const kb = kindOf(b);
  const numbers = (ka === "int" || ka === "uint") && (kb === "int" || kb === "uint");
  if ((ka !== "other" && ka === kb) || numbers) return (a as { v: unknown }).v === (b as { v: unknown }).v;
  if (ka !== kb) {
    throw new ExecError(
      `error calling ${name}: incompatible types for comparison: ${goType(a)} and ${goType(b)}`,
    );
  }
  // Slices and maps (the bare question is refused at setup): never comparable.
  if (a.t !== b.t) {
    throw new ExecError(
      `error calling ${name}: non-comparable types ${printValue(a)}: ${goType(a)}, ${goType(b)}: ${printValue(b)}`,
    );
  }
  throw new ExecError(`error calling ${name}: non-comparable type ${printValue(b)}: ${goType(b)}`);
}

/** `eq A B C...`: A equals any of the others. */
export function eq(args: readonly Value[]): Value {
  if (args.length === 0)
    throw new ExecError("wrong number of args for eq: want at least 1 got 0", undefined, true);
  const [first, ...rest] = args as [Value, ...Value[]];
  if (rest.length === 0) throw new ExecError("error calling eq: missing argument for comparison");
  return { t: "bool", v: rest.some((other) => equal("eq", first, other)) };
}

function two(name: string, args: readonly Value[]): [Value, Value] {
  if (args.length !== 2)
    throw new ExecError(`wrong number of args for ${name}: want 2 got ${args.length}`, undefined, true);
  return args as [Value, Value];
}

export function ne(args: readonly Value[]): Value {
  const [a, b] = two("ne", args);
  return { t: "bool", v: !equal("ne", a, b) };
}

/** Go's lt, which le, gt and ge are built on; `name` is the builtin called, for the error. */
function less(name: string, a: Value, b: Value): boolean {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka === "other" || kb === "other" || a.t === "none" || b.t === "none")
    throw new ExecError(`error calling ${name}: invalid type for comparison`);
  const numbers = (ka === "int" || ka === "uint") && (kb === "int" || kb === "uint");
  if (ka !== kb && !numbers) {
    throw new ExecError(
      `error calling ${name}: incompatible types for comparison: ${goType(a)} and ${goType(b)}`,
    );
  }
  if (ka === "bool") throw new ExecError(`error calling ${name}: invalid type for comparison`);
  return (a as { v: bigint | string }).v < (b as { v: bigint | string }).v;
}

export function lt(args: readonly Value[]): Value {
  const [a, b] = two("lt", args);
  return { t: "bool", v: less("lt", a, b) };
}

export function le(args: readonly Value[]): Value {
  const [a, b] = two("le", args);
  return { t: "bool", v: less("le", a, b) || equal("le", a, b) };
}

export function gt(args: readonly Value[]): Value {
  const [a, b] = two("gt", args);
  return { t: "bool", v: !(less("gt", a, b) || equal("gt", a, b)) };
}

export function ge(args: readonly Value[]): Value {
  const [a, b] = two("ge", args);
  return { t: "bool", v: !less("ge", a, b) };
}

export function not(args: readonly Value[]): Value {
  if (args.length !== 1)
    throw new ExecError(`wrong number of args for not: want 1 got ${args.length}`, undefined, true);
  return { t: "bool", v: !truth(args[0] as Value) };
}
