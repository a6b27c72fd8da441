// The conntrack section of KubeProxyConfiguration as kernel settings, in kube-proxy's order
// (pkg/proxy/conntrack/sysctls.go in v1.37): the table size first (only ever raised, with
// the hash table grown to a quarter of it), then the timeouts. A zero leaves the kernel's value.
import type { NodeSetting } from "../sysctl/node-setting.js";

export interface ConntrackConfig {
  /** Entries per CPU; 0 leaves nf_conntrack_max alone (kind sets 0 for its nodes). */
  readonly maxPerCore: number;
  /** Floor of nf_conntrack_max when maxPerCore × CPUs is smaller. */
  readonly min: number;
  readonly tcpEstablishedTimeoutMs: number;
  readonly tcpCloseWaitTimeoutMs: number;
  readonly tcpBeLiberal: boolean;
  readonly udpTimeoutMs: number;
  readonly udpStreamTimeoutMs: number;
}

/** v1alpha1's defaults. */
export const DEFAULT_CONNTRACK: ConntrackConfig = {
  maxPerCore: 32 * 1024,
  min: 128 * 1024,
  tcpEstablishedTimeoutMs: 24 * 3600_000,
  tcpCloseWaitTimeoutMs: 3600_000,
  tcpBeLiberal: false,
  udpTimeoutMs: 0,
  udpStreamTimeoutMs: 0,
};

/** kube-proxy caps the scaled value so that a many-core node does not pin a huge table. */
export const CONNTRACK_MAX_LIMIT = 1024 * 1024;

/** A module parameter, not a sysctl: the size of the conntrack hash table. */
export const CONNTRACK_HASHSIZE = "/sys/module/nf_conntrack/parameters/hashsize";

/** Read back by iptables mode: when set (by us or anyone), INVALID packets are not dropped. */
export const TCP_BE_LIBERAL = "net.netfilter.nf_conntrack_tcp_be_liberal";

/** The nf_conntrack_max kube-proxy wants; 0 means "leave it". */
export function conntrackMax(c: Pick<ConntrackConfig, "maxPerCore" | "min">, numCPU: number): number {
  if (c.maxPerCore <= 0) return 0;
  const scaled = c.maxPerCore * numCPU;
  if (scaled > CONNTRACK_MAX_LIMIT) return CONNTRACK_MAX_LIMIT;
  return Math.max(scaled, c.min);
}

/** Whole seconds, truncated as Go's Duration / time.Second does. */
const seconds = (ms: number) => Math.floor(ms / 1000);

export function conntrackSettings(c: ConntrackConfig, numCPU: number): NodeSetting[] {
  const out: NodeSetting[] = [];
  const max = conntrackMax(c, numCPU);
  if (max > 0) {
    out.push(
      {
        key: "net.netfilter.nf_conntrack_max",
        value: max,
        writeWhen: "lower",
        reason: "conntrack.maxPerCore × CPUs (at least conntrack.min)",
      },
      {
        key: CONNTRACK_HASHSIZE,
        value: Math.floor(max / 4),
        writeWhen: "lower",
        reason: "a hash bucket per four entries of nf_conntrack_max",
      },
    );
  }
  const timeout = (name: string, ms: number, field: string) => {
    if (ms > 0) {
      out.push({ key: `net.netfilter.${name}`, value: seconds(ms), writeWhen: "differs", reason: field });
    }
  };
  timeout(
    "nf_conntrack_tcp_timeout_established",
    c.tcpEstablishedTimeoutMs,
    "conntrack.tcpEstablishedTimeout",
  );
  timeout("nf_conntrack_tcp_timeout_close_wait", c.tcpCloseWaitTimeoutMs, "conntrack.tcpCloseWaitTimeout");
  if (c.tcpBeLiberal) {
    out.push({
      key: TCP_BE_LIBERAL,
      value: 1,
      writeWhen: "differs",
      reason: "conntrack.tcpBeLiberal: only out-of-window RSTs are INVALID",
    });
  }
  timeout("nf_conntrack_udp_timeout", c.udpTimeoutMs, "conntrack.udpTimeout");
  timeout("nf_conntrack_udp_timeout_stream", c.udpStreamTimeoutMs, "conntrack.udpStreamTimeout");
  return out;
}
