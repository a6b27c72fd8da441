// ebpf mode's map sizes, from the metrics the dashboard already scrapes: the proxy reports the entries each map it
// writes holds after a sync (kubeproxy_sync_proxy_rules_bpf_map_entries{ip_family, map}), as the other modes
// report their rule counts.
import type { BPFMapSize } from "./view-model.js";

export const bpfMapEntriesGauge = "kubeproxy_sync_proxy_rules_bpf_map_entries";

/** The kernel's name prefix of a family's maps, which the page shows: lb4_services, lb6_backends. */
const prefixOf = (family: string) => (family === "IPv6" ? "lb6" : "lb4");

/** One sample per (family, map), IPv4 first, in the order the proxy lists its maps; none outside ebpf mode. */
export function bpfMapSizes(metrics: string): BPFMapSize[] {
  const prefix = `${bpfMapEntriesGauge}{`;
  const sizes: BPFMapSize[] = [];
  for (const line of metrics.split("\n")) {
    if (!line.startsWith(prefix)) continue;
    const labels = line.slice(prefix.length, line.indexOf("}"));
    const family = /(?:^|,)ip_family="([^"]*)"/.exec(labels)?.[1] ?? "";
    const map = /(?:^|,)map="([^"]*)"/.exec(labels)?.[1] ?? "";
    const entries = Number(line.split(/\s+/).at(-1));
    if (map && Number.isFinite(entries)) sizes.push({ name: `${prefixOf(family)}_${map}`, entries });
  }
  // Stable, so the proxy's own order of maps within a family stays.
  return sizes.sort((a, b) => a.name.slice(0, 3).localeCompare(b.name.slice(0, 3)));
}
