// The two iptables-mode counters kube-proxy v1.37.2 reads from the kernel at each scrape rather than counting
// itself (pkg/proxy/metrics metrics_linux.go): the packets of the rules that name an nfacct object. As upstream,
// an object that cannot be read (not created yet, or gone) gives no sample and an error line, not a zero.
import { Counter, type Registry } from "prom-client";
import { CT_STATE_INVALID_NFACCT, LOCALHOST_NODEPORTS_NFACCT } from "../iptables/names.js";
import type { Nfacct } from "../nfacct/nfacct.js";
import type { ProxierLogger } from "../proxier/backend.js";

export { CT_STATE_INVALID_NFACCT, LOCALHOST_NODEPORTS_NFACCT };

/** The objects iptables mode keeps, each with the metric that shows its packet count. */
export const NFACCT_METRICS = [
  {
    counter: CT_STATE_INVALID_NFACCT,
    name: "kubeproxy_iptables_ct_state_invalid_dropped_packets_total",
    help: "[ALPHA] packets dropped by iptables to work around conntrack problems",
  },
  {
    counter: LOCALHOST_NODEPORTS_NFACCT,
    name: "kubeproxy_iptables_localhost_nodeports_accepted_packets_total",
    help: "[ALPHA] Number of packets accepted on nodeports of loopback interface",
  },
] as const;

/** A label-less counter whose one sample is read when scraped, or left out when it cannot be read. */
class ReadOnScrapeCounter extends Counter {
  readonly #read: () => Promise<number | undefined>;

  constructor(name: string, help: string, registry: Registry, read: () => Promise<number | undefined>) {
    super({ name, help, registers: [registry] });
    this.#read = read;
  }

  override async get() {
    const [base, value] = await Promise.all([super.get(), this.#read()]);
    return { ...base, values: value === undefined ? [] : [{ value, labels: {} }] };
  }
}

/** Registers both nfacct metrics on `registry` (iptables mode, when the kernel's nfacct answered). */
export function registerNfacctMetrics(registry: Registry, nfacct: Nfacct, logger: ProxierLogger): void {
  for (const m of NFACCT_METRICS) {
    new ReadOnScrapeCounter(m.name, m.help, registry, async () => {
      try {
        return (await nfacct.get(m.counter)).packets;
      } catch (err) {
        logger.error("failed to collect nfacct counter", { err: (err as Error).message, counter: m.counter });
        return undefined;
      }
    });
  }
}
