/**
 * Whether `labels` satisfy a Service selector (equality only, as Services allow). An empty selector
 * matches nothing here: upstream's controller treats `{}` as "no Pods" for Services.
 */
export function selectorMatches(
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const entries = Object.entries(selector);
  if (entries.length === 0) return false;
  return entries.every(([key, value]) => labels?.[key] === value);
}
