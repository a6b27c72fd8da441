import { parseUint } from "../../plugin/pkg/parse-uint.js";
import { sprint, sprintf, sprintln } from "./go-fmt.js";
import { eq, ge, gt, le, lt, ne, not, truth } from "./tmpl-compare.js";
import type { Value } from "./tmpl-value.js";
import { ExecError, goType, int, str } from "./tmpl-value.js";

type Fn = (args: readonly Value[]) => Value;

/** Go's argument conversion to a `string` parameter. */
export function asString(v: Value): string {
  if (v.t === "string") return v.v;
  if (v.t === "none") throw new ExecError("invalid value; expected string");
  throw new ExecError(`wrong type for value; expected string; got ${goType(v)}`);
}

/** Go's argument conversion to an `int` parameter. */
function asInt(v: Value): number {
  if (v.t === "int" && v.go === "int") return Number(v.v);
  if (v.t === "none") throw new ExecError("invalid value; expected int");
  throw new ExecError(`wrong type for value; expected int; got ${goType(v)}`);
}

function arity(name: string, args: readonly Value[], want: number): void {
  if (args.length !== want)
    throw new ExecError(`wrong number of args for ${name}: want ${want} got ${args.length}`, undefined, true);
}

/** The builtin `index`: slices and strings by integer, maps by key (a missing key gives ""). */
function index(args: readonly Value[]): Value {
  if (args.length === 0)
    throw new ExecError("wrong number of args for index: want at least 1 got 0", undefined, true);
  let item = args[0] as Value;
  for (const key of args.slice(1)) {
    if (item.t === "none") throw new ExecError("error calling index: index of untyped nil");
    if (item.t === "slice" || item.t === "string") {
      if (key.t !== "int")
        throw new ExecError(`error calling index: cannot index slice/array with type ${goType(key)}`);
      const length = item.t === "slice" ? item.v.length : Buffer.byteLength(item.v);
      if (key.v < 0n || key.v >= BigInt(length))
        throw new ExecError(`error calling index: index out of range: ${key.v}`);
      item =
        item.t === "slice"
          ? str(item.v[Number(key.v)] as string)
          : int(BigInt(Buffer.from(item.v)[Number(key.v)] as number), "uint8");
    } else if (item.t === "map") {
      if (key.t !== "string")
        throw new ExecError(`error calling index: value has type ${goType(key)}; should be string`);
      item = str(item.v.get(key.v) ?? "");
    } else {
      throw new ExecError(`error calling index: can't index item of type ${goType(item)}`);
    }
  }
  return item;
}

function len(args: readonly Value[]): Value {
  arity("len", args, 1);
  const v = args[0] as Value;
  if (v.t === "string") return int(BigInt(Buffer.byteLength(v.v)));
  if (v.t === "slice") return int(BigInt(v.v.length));
  if (v.t === "map") return int(BigInt(v.v.size));
  throw new ExecError(`error calling len: len of type ${goType(v)}`);
}

/** Upstream's one added function: strconv.ParseUint(s, base, bitSize). */
function parseIntFn(args: readonly Value[]): Value {
  arity("parseInt", args, 3);
  const [s, base, bits] = args as [Value, Value, Value];
  const result = parseUint(asString(s), asInt(base), asInt(bits));
  if (typeof result === "string") throw new ExecError(`error calling parseInt: ${result}`);
  return int(result, "uint64");
}

function printf(args: readonly Value[]): Value {
  if (args.length === 0)
    throw new ExecError("wrong number of args for printf: want at least 1 got 0", undefined, true);
  return str(sprintf(asString(args[0] as Value), args.slice(1)));
}

/**
 * Every function a template may call; anything else fails at setup. `and` and `or` are here for the
 * parser's sake: the executor runs them itself, as Go does, so their arguments are evaluated lazily.
 */
export const FUNCTIONS: Record<string, Fn> = {
  and: (args) => args.find((a) => !truth(a)) ?? (args.at(-1) as Value),
  or: (args) => args.find(truth) ?? (args.at(-1) as Value),
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  not,
  index,
  len,
  parseInt: parseIntFn,
  printf,
  print: (args) => str(sprint(args)),
  println: (args) => str(sprintln(args)),
};
