/**
 * Kubernetes label selectors as `labels` and `namespace_labels` take them. CoreDNS turns the text into a
 * metav1.LabelSelector, so only the operators that type can hold are accepted: `k=v`, `k==v`,
 * `k in (..)`, `k notin (..)`, `k` and `!k`; `!=`, `<` and `>` are rejected as CoreDNS rejects them.
 * The selector goes to the API server in canonical form, and tests' fixture cluster matches with it.
 */

export type Requirement =
  | { key: string; op: "="; values: string[] }
  | { key: string; op: "in"; values: string[] }
  | { key: string; op: "notin"; values: string[] }
  | { key: string; op: "exists" }
  | { key: string; op: "!" };

export interface LabelSelector {
  requirements: Requirement[];
  /** Canonical text for `labelSelector=` (sorted by key, values sorted), as client-go prints it. */
  text: string;
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
}

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Throws an Error whose message is the reason, for the caller to put in its own sentence. */
export function parseLabelSelector(text: string): LabelSelector {
  const tokens = text.match(/\s*(==|!=|[=!(),<>]|[^\s=!(),<>]+)/g)?.map((t) => t.trim()) ?? [];
  if (tokens.join("") !== text.replace(/\s+/g, "")) throw new Error(`invalid selector '${text}'`);
  const reqs: Requirement[] = [];
  let i = 0;
  const next = () => tokens[i++];
  const peek = () => tokens[i];
  while (i < tokens.length) {
    reqs.push(requirement(next, peek));
    const sep = next();
    if (sep !== undefined && sep !== ",") throw new Error(`found '${sep}', expected: ',' or end of string`);
    if (sep === "," && i >= tokens.length) throw new Error("found end of string, expected: identifier");
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    requirements: reqs,
    text: reqs.map(format).join(","),
    matches: (l) => reqs.every((r) => holds(r, l)),
  };
}

function requirement(next: () => string | undefined, peek: () => string | undefined): Requirement {
  if (peek() === "!") {
    next();
    return { key: key(next()), op: "!" };
  }
  const k = key(next());
  const op = peek();
  if (op === undefined || op === ",") return { key: k, op: "exists" };
  next();
  if (op === "=" || op === "==") {
    const v = peek() === "," || peek() === undefined ? "" : value(next());
    return { key: k, op: "=", values: [v] };
  }
  if (op === "in" || op === "notin") return { key: k, op, values: valueSet(next, peek) };
  if (op === "!=" || op === "<" || op === ">")
    throw new Error(`"${op}" is not a valid label selector operator`);
  throw new Error(`found '${op}', expected: in, notin, =, ==, !=, gt, lt`);
}

function valueSet(next: () => string | undefined, peek: () => string | undefined): string[] {
  if (next() !== "(") throw new Error("found end of string, expected: '('");
  const values = new Set<string>();
  for (;;) {
    const t = peek();
    if (t === ")" || t === ",") values.add("");
    else values.add(value(next()));
    const sep = next();
    if (sep === ")") return [...values].sort();
    if (sep !== ",") throw new Error(`found '${sep ?? "end of string"}', expected: ',' or ')'`);
  }
}

function key(k: string | undefined): string {
  if (k === undefined || /^[=!(),<>]/.test(k))
    throw new Error(`found '${k ?? "end of string"}', expected: identifier`);
  const parts = k.split("/");
  const [prefix, name] = parts.length === 2 ? parts : ["", k];
  const validPrefix = prefix === "" || (prefix !== undefined && prefix.length <= 253 && PREFIX.test(prefix));
  if (parts.length > 2 || !validPrefix || name === undefined || !NAME.test(name))
    throw new Error(`invalid label key "${k}"`);
  return k;
}

function value(v: string | undefined): string {
  if (v === undefined || /^[=!(),<>]/.test(v))
    throw new Error(`found '${v ?? "end of string"}', expected: identifier`);
  if (!NAME.test(v)) throw new Error(`invalid label value: "${v}"`);
  return v;
}

function format(r: Requirement): string {
  if (r.op === "exists") return r.key;
  if (r.op === "!") return `!${r.key}`;
  if (r.op === "=") return `${r.key}=${r.values[0] ?? ""}`;
  return `${r.key} ${r.op} (${r.values.join(",")})`;
}

function holds(r: Requirement, labels: Readonly<Record<string, string>> = {}): boolean {
  const has = Object.hasOwn(labels, r.key);
  if (r.op === "exists") return has;
  if (r.op === "!") return !has;
  const v = labels[r.key];
  if (r.op === "notin") return !has || !r.values.includes(v ?? "");
  return has && r.values.includes(v ?? "");
}
