import type { Pod } from "kubernetes-types/core/v1.js";
import type { Exec } from "../exec.js";
import { histogram, syncHistogram } from "../scenarios/kit/prom.js";
import { proxyMetricsGet, ruleCounts } from "../stack/proxy-measure.js";
import type { DnsScrape } from "./dns-view.js";
import type { ProxyScrape } from "./proxies-view.js";

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * One reading of a node's proxy from inside the node, as an operator would curl it: /metrics and /proxyMode on
 * 127.0.0.1:10249. Rules are counted in the kernel only when the proxy synced since `before` counted them (a
 * dump of iptables and nftables per node on every round would cost more than the page is worth).
 */
export async function scrapeProxy(
  exec: Exec,
  node: string,
  shell: readonly string[],
  before: ProxyScrape | undefined,
  now: () => number,
): Promise<ProxyScrape> {
  const at = now();
  try {
    const [metrics, mode] = await Promise.all([
      exec(proxyMetricsGet(shell, "/metrics")),
      exec(proxyMetricsGet(shell, "/proxyMode")),
    ]);
    const syncs = histogram(metrics, syncHistogram).count;
    const countedAt = before?.rules ? histogram(before.metrics, syncHistogram).count : -1;
    const rules = syncs === countedAt && before?.rules ? before.rules : await ruleCounts(exec, shell);
    return { node, at, mode: mode.trim(), metrics, rules, error: "" };
  } catch (err) {
    return { node, at, mode: "", metrics: "", error: message(err) };
  }
}

/** A URL host for an IPv4 or IPv6 pod address. */
const host = (ip: string) => (ip.includes(":") ? `[${ip}]` : ip);

/** One reading of a DNS pod's prometheus endpoint (:9153), from its node, which reaches its pods directly. */
export async function scrapeDnsPod(
  exec: Exec,
  pod: Pod,
  shell: readonly string[],
  now: () => number,
): Promise<DnsScrape> {
  const name = pod.metadata?.name ?? "";
  const at = now();
  const ip = pod.status?.podIP;
  if (!ip) return { pod: name, at, metrics: "", error: "no pod IP yet" };
  try {
    const url = `http://${host(ip)}:9153/metrics`;
    const metrics = await exec([...shell, "curl", "-sf", "--max-time", "2", url]);
    return { pod: name, at, metrics, error: "" };
  } catch (err) {
    return { pod: name, at, metrics: "", error: message(err) };
  }
}
