import type { Value } from "./tmpl-value.js";
import { goType, printValue } from "./tmpl-value.js";

/** The verbs `printf` formats here; a constant format using any other is refused at setup. */
export const PRINTF_VERBS = "vsdqxXobt%";

const VERB = /%([-+# 0]*)(\d*)(?:\.(\d*))?(.)/gs;

/** The verbs a format string uses, for the setup check. */
export function formatVerbs(format: string): string[] {
  return [...format.matchAll(VERB)].map((m) => m[4] as string);
}

/** Go's fmt.Sprintf for the verbs above, with fmt's `%!d(string=x)` and `%!v(MISSING)` for misuse. */
export function sprintf(format: string, args: readonly Value[]): string {
  let next = 0;
  let out = format.replace(
    VERB,
    (_m, flags: string, width: string, precision: string | undefined, verb: string) => {
      if (verb === "%") return "%";
      const arg = args[next++];
      if (!arg) return `%!${verb}(MISSING)`;
      const body = formatOne(verb, arg, flags, precision);
      return pad(body, flags, width === "" ? 0 : Number(width), arg.t === "int");
    },
  );
  if (next < args.length)
    out += `%!(EXTRA ${args
      .slice(next)
      .map((a) => `${goType(a)}=${printValue(a)}`)
      .join(", ")})`;
  return out;
}

function formatOne(verb: string, arg: Value, flags: string, precision: string | undefined): string {
  const bad = () => `%!${verb}(${goType(arg)}=${printValue(arg)})`;
  if (arg.t === "int") {
    const n = arg.v;
    const sign = n < 0n ? "-" : flags.includes("+") ? "+" : "";
    const abs = n < 0n ? -n : n;
    const radix = { d: 10, v: 10, x: 16, X: 16, o: 8, b: 2 }[verb];
    if (radix === undefined) return bad();
    let digits = abs.toString(radix);
    if (verb === "X") digits = digits.toUpperCase();
    if (precision) digits = digits.padStart(Number(precision), "0");
    const prefix = flags.includes("#") ? ({ x: "0x", X: "0X", o: "0" }[verb] ?? "") : "";
    return sign + prefix + digits;
  }
  if (arg.t === "string") {
    const s = precision === undefined ? arg.v : arg.v.slice(0, Number(precision));
    if (verb === "s" || verb === "v") return s;
    if (verb === "q") return JSON.stringify(s);
    if (verb === "x" || verb === "X") {
      const hex = Buffer.from(s, "utf8").toString("hex");
      return verb === "X" ? hex.toUpperCase() : hex;
    }
    return bad();
  }
  if (arg.t === "bool") return verb === "t" || verb === "v" ? String(arg.v) : bad();
  if (verb === "v" || verb === "s") return printValue(arg);
  return bad();
}

/** Width: spaces on the left, or on the right with `-`; zeros after the sign with `0` for numbers. */
function pad(body: string, flags: string, width: number, numeric: boolean): string {
  if (body.length >= width) return body;
  if (flags.includes("-")) return body.padEnd(width, " ");
  if (flags.includes("0") && numeric) {
    const sign = /^[+-]/.test(body) ? (body[0] as string) : "";
    return sign + body.slice(sign.length).padStart(width - sign.length, "0");
  }
  return body.padStart(width, " ");
}

/** fmt.Sprint: a blank between two operands when neither is a string. */
export function sprint(args: readonly Value[]): string {
  let out = "";
  args.forEach((a, i) => {
    const prev = args[i - 1];
    if (prev && a.t !== "string" && prev.t !== "string") out += " ";
    out += printValue(a);
  });
  return out;
}

/** fmt.Sprintln: blanks between all operands and a newline at the end. */
export function sprintln(args: readonly Value[]): string {
  return `${args.map(printValue).join(" ")}\n`;
}
