// Everything /metrics serves, registered as upstream's RegisterMetrics does for the mode: the kubeproxy_* set
// (@switchyard/proxier), in iptables mode the two nfacct counters when the kernel's nfacct answered, and the
// process_* metrics every Go component exports (CPU, resident memory, open fds, start time), from prom-client's
// collectors so dashboards built on upstream's find them (nodejs_* come along).
import {
  type Nfacct,
  newProxyMetrics,
  type ProxierLogger,
  type ProxyMetrics,
  type ProxyMode,
  registerNfacctMetrics,
} from "@switchyard/proxier";
import { collectDefaultMetrics } from "prom-client";

export function newAppMetrics(
  mode: ProxyMode,
  nfacct: Nfacct | undefined,
  logger: ProxierLogger,
): ProxyMetrics {
  const metrics = newProxyMetrics(mode);
  if (mode === "iptables" && nfacct) registerNfacctMetrics(metrics.registry, nfacct, logger);
  collectDefaultMetrics({ register: metrics.registry });
  return metrics;
}
