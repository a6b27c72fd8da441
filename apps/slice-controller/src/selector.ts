/**
 * Whether `labels` satisfy a Service selector (equality only, as Services allow). An empty selector
 * matches every Pod, as upstream's `labels.Set{}.AsSelectorPreValidated()` does; only a missing selector
 * means "selectorless" (callers check that first). The apiserver never sends `{}`: it stores an empty map
 * as none, so in a real cluster `selector: {}` reads back absent.
 */
export function selectorMatches(
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}
