/** The value of every sample of one metric (one per label set), only those whose labels include `labels`. */
export function metricSamples(text: string, name: string, labels: Record<string, string> = {}): number[] {
  const values: number[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith("{") || rest.startsWith(" "))) continue;
    const labelText = rest.startsWith("{") ? rest.slice(1, rest.indexOf("}")) : "";
    if (!Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) continue;
    values.push(Number(line.split(/\s+/).at(-1)) || 0);
  }
  return values;
}

/**
 * Prometheus text format, read the way a person reads /metrics: the sum of every sample of one metric (over its
 * label sets, e.g. both IP families), optionally only the samples whose labels include `labels`.
 */
export const metricSum = (text: string, name: string, labels: Record<string, string> = {}): number =>
  metricSamples(text, name, labels).reduce((a, b) => a + b, 0);

/** A histogram's count and sum (seconds). */
export const histogram = (text: string, name: string, labels: Record<string, string> = {}) => ({
  count: metricSum(text, `${name}_count`, labels),
  sum: metricSum(text, `${name}_sum`, labels),
});

export const syncHistogram = "kubeproxy_sync_proxy_rules_duration_seconds";
export const fullSyncHistogram = "kubeproxy_sync_full_proxy_rules_duration_seconds";
export const partialSyncHistogram = "kubeproxy_sync_partial_proxy_rules_duration_seconds";
export const lastSyncGauge = "kubeproxy_sync_proxy_rules_last_timestamp_seconds";
export const programmingHistogram = "kubeproxy_network_programming_duration_seconds";
