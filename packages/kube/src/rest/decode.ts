/*
 * How API objects are read, everywhere in Switchyard: a field whose value is `null` is the same as a field
 * that is absent.
 *
 * The apiserver writes a Go nil slice, map or pointer without `omitempty` as `null`. Built-in objects are
 * stored as protobuf, where an empty list and no list are the same thing, so an empty list that was sent
 * as `[]` comes back as `null` (an EndpointSlice with no endpoints: `"endpoints": null, "ports": null`).
 * client-go decodes both into a nil slice, which Go code ranges over and measures without a second thought.
 * TypeScript code written against kubernetes-types (`ports?: EndpointPort[]`) is not so lucky: `null` is
 * not `undefined`, so `slice.ports?.map(...)` throws. Dropping null fields as objects are decoded gives every
 * consumer what client-go gives Go code: "absent" is the only way a field can be missing.
 *
 * Array elements stay as they are: the apiserver never sends a null element, and removing one would shift
 * the indexes of the rest.
 *
 * One trap stays: kubernetes-types declares `EndpointSlice.endpoints` required, so the compiler does not
 * ask for a check, yet a slice with no endpoints arrives without it (Go: a nil slice). Read it as
 * `slice.endpoints ?? []`. test/api-data runs every consumer on such objects.
 */

/** Removes every null-valued property of `value`, in place and at any depth; returns `value`. */
export function dropNullFields<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    for (const element of value) dropNullFields(element);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const field = record[key];
    if (field === null) delete record[key];
    else if (typeof field === "object") dropNullFields(field);
  }
  return value;
}

/** Parses API JSON (a response body or one watch line) with null fields read as absent. */
export function parseApiJson(text: string): unknown {
  return dropNullFields(JSON.parse(text) as unknown);
}
