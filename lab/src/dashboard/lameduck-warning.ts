import type { DnsView, ProxyView, Warning } from "./view-model.js";

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;

/**
 * Claim C16: a DNS pod must keep answering until every node's rules have stopped sending to it. When the lameduck
 * window is shorter than the slowest node's p99 of kubeproxy_network_programming_duration_seconds (a pod change
 * until the rules that carry it are in the kernel), some queries reach a server that has already exited.
 */
export function lameduckWarning(dns: DnsView, proxies: readonly ProxyView[]): Warning | undefined {
  if (dns.lameduckMs === undefined) return undefined;
  const slowest = proxies
    .filter((p) => p.programming.p99Ms !== undefined)
    .sort((a, b) => (b.programming.p99Ms ?? 0) - (a.programming.p99Ms ?? 0))[0];
  const p99 = slowest?.programming.p99Ms;
  if (!slowest || p99 === undefined || dns.lameduckMs >= p99) return undefined;
  const lameduck = dns.lameduck ? `lameduck ${dns.lameduck}` : "no lameduck";
  return {
    id: "lameduck",
    text:
      `DNS ${lameduck} is shorter than the proxies' network programming p99 of ${seconds(p99)} ` +
      `(${slowest.node}): nodes may still send queries to a DNS pod that has already exited (claim C16). ` +
      "Set the Corefile's health { lameduck } above it.",
  };
}
