/**
 * The values a template handles, each with the Go type it stands for: Go's printing and error messages
 * depend on that type (`uint64` from parseInt prints as a number, a missing map key as `<no value>`).
 */
export type Value =
  | { t: "string"; v: string }
  | { t: "int"; v: bigint; go: "int" | "uint8" | "uint16" | "uint64" }
  | { t: "bool"; v: boolean }
  | { t: "slice"; v: readonly string[] }
  | { t: "map"; v: ReadonlyMap<string, string> }
  | { t: "question" }
  /** The template data itself: what `$` holds, and `.` outside `with` and `range`. */
  | { t: "data" }
  /** Go's invalid reflect.Value: what a missing map key evaluates to. */
  | { t: "none" };

export const str = (v: string): Value => ({ t: "string", v });
export const int = (v: bigint, go: "int" | "uint8" | "uint16" | "uint64" = "int"): Value => ({
  t: "int",
  v,
  go,
});
export const NONE: Value = { t: "none" };

/** The Go type name, as error messages print it. */
export function goType(v: Value): string {
  switch (v.t) {
    case "string":
    case "bool":
      return v.t;
    case "int":
      return v.go;
    case "slice":
      return "[]string";
    case "map":
      return "map[string]string";
    case "question":
      return "*dns.Question";
    case "data":
      return "*template.templateData";
    case "none":
      return "<nil>";
  }
}

/** fmt's `%v`, which is how an action prints its value. */
export function printValue(v: Value): string {
  switch (v.t) {
    case "string":
      return v.v;
    case "int":
      return v.v.toString();
    case "bool":
      return String(v.v);
    case "slice":
      return `[${v.v.join(" ")}]`;
    case "map":
      return `map[${[...v.v.keys()]
        .sort()
        .map((k) => `${k}:${v.v.get(k)}`)
        .join(" ")}]`;
    case "question":
    case "data":
      // Go prints these structs field by field, pointers as addresses: not reproduced (see parseTemplate).
      throw new ExecError(`printing a ${goType(v)} is not supported by this implementation`);
    case "none":
      return "<no value>";
  }
}

/**
 * A failure while running a template, pinned to the node Go would name (`at <index .Match 2>`). With
 * `atFunction`, Go names the function alone (`at <lt>`), as it does for a wrong number of arguments.
 */
export class ExecError extends Error {
  constructor(
    message: string,
    readonly at?: { text: string; pos: number },
    readonly atFunction = false,
  ) {
    super(message);
  }
}
