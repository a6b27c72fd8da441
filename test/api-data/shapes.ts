// Field paths of JSON values, written as in generate.ts ("a.b[].c": `[]` is every element of a list), for
// describing what the apiserver sent back.

/** What the apiserver made of a field that was sent as [] or {}. */
export type Outcome = "null" | "omitted" | "empty" | "filled";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
const isEmpty = (v: unknown) =>
  Array.isArray(v) ? v.length === 0 : isRecord(v) && Object.keys(v).length === 0;
const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

function outcomeOf(got: unknown): Outcome {
  if (got === undefined) return "omitted";
  if (got === null) return "null";
  return isEmpty(got) ? "empty" : "filled";
}

function walkSent(sent: unknown, got: unknown, path: string, out: Record<string, Outcome>): void {
  if (isEmpty(sent)) {
    out[path] = outcomeOf(got);
    return;
  }
  if (Array.isArray(sent)) {
    sent.forEach((element, i) => {
      walkSent(element, Array.isArray(got) ? got[i] : undefined, `${path}[]`, out);
    });
    return;
  }
  if (!isRecord(sent)) return;
  for (const [key, value] of Object.entries(sent)) {
    walkSent(value, isRecord(got) ? got[key] : undefined, join(path, key), out);
  }
}

/** For every path that `sent` holds an empty list or map at: what `got` holds there. */
export function outcomes(sent: unknown, got: unknown): Record<string, Outcome> {
  const out: Record<string, Outcome> = {};
  walkSent(sent, got, "", out);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** Every path (sorted, once) whose value satisfies `match`. */
export function pathsOf(value: unknown, match: (v: unknown) => boolean): string[] {
  const found = new Set<string>();
  const walk = (v: unknown, path: string) => {
    if (path !== "" && match(v)) found.add(path);
    if (Array.isArray(v)) for (const element of v) walk(element, `${path}[]`);
    else if (isRecord(v)) for (const [key, field] of Object.entries(v)) walk(field, join(path, key));
  };
  walk(value, "");
  return [...found].sort();
}

/** A copy of `value` without the fields at `paths`. */
export function withoutPaths(value: unknown, paths: readonly string[]): unknown {
  const copy = structuredClone(value);
  const remove = (v: unknown, segments: string[]) => {
    const [head, ...rest] = segments;
    if (head === undefined) return;
    const each = head.endsWith("[]");
    const key = each ? head.slice(0, -2) : head;
    if (!isRecord(v)) return;
    if (rest.length === 0 && !each) {
      delete v[key];
      return;
    }
    const child = v[key];
    if (each && Array.isArray(child)) for (const element of child) remove(element, rest);
    else if (!each) remove(child, rest);
  };
  for (const path of paths) remove(copy, path.split("."));
  return copy;
}
