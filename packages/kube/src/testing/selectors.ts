import type { KubeObject } from "../rest/object.js";

// Just enough of the apiserver's selector grammar for tests: equality, inequality and existence.

export function matchesLabelSelector(obj: KubeObject, selector: string | undefined): boolean {
  if (!selector) return true;
  const labels = obj.metadata?.labels ?? {};
  return selector.split(",").every((raw) => {
    const term = raw.trim();
    if (term.startsWith("!")) return !(term.slice(1) in labels);
    const ne = term.split("!=");
    if (ne.length === 2) return labels[ne[0] ?? ""] !== ne[1];
    const eq = term.split(/==?/);
    if (eq.length === 2) return labels[eq[0] ?? ""] === eq[1];
    return term in labels;
  });
}

export function matchesFieldSelector(obj: KubeObject, selector: string | undefined): boolean {
  if (!selector) return true;
  return selector.split(",").every((raw) => {
    const negated = raw.includes("!=");
    const [path = "", want = ""] = raw.split(/!=|==?/);
    let value: unknown = obj;
    for (const part of path.trim().split(".")) {
      value = value && typeof value === "object" ? (value as Record<string, unknown>)[part] : undefined;
    }
    const equal = String(value ?? "") === want.trim();
    return negated ? !equal : equal;
  });
}
