// What the proxy learns about its own Node before it starts: addresses, pod CIDRs, labels.
import {
  type Clock,
  isNotFound,
  type Logger,
  nodes,
  type RestClient,
  realClock,
  sleep,
} from "@switchyard/kube";
import type { IPFamily } from "@switchyard/proxier";
import type { Node } from "kubernetes-types/core/v1.js";

export interface NodeInfo {
  readonly node: Node | undefined;
  /** Primary IP per family: InternalIP before ExternalIP, as kube-proxy picks them. */
  readonly ips: Partial<Record<IPFamily, string>>;
}

export const familyOf = (ip: string): IPFamily => (ip.includes(":") ? "IPv6" : "IPv4");

export function nodeIPs(node: Node | undefined): Partial<Record<IPFamily, string>> {
  const out: Partial<Record<IPFamily, string>> = {};
  const addrs = node?.status?.addresses ?? [];
  for (const type of ["InternalIP", "ExternalIP"]) {
    for (const a of addrs) if (a.type === type) out[familyOf(a.address)] ??= a.address;
  }
  return out;
}

/**
 * Reads the Node, waiting up to `timeoutMs` for it to appear (kubelet may register after
 * the DaemonSet pod starts). Without it the proxy still runs, on loopback addresses, as
 * upstream does, and says so.
 */
export async function fetchNode(
  client: RestClient,
  name: string,
  logger: Logger,
  timeoutMs = 30_000,
  clock: Clock = realClock,
): Promise<NodeInfo> {
  const deadline = clock.now() + timeoutMs;
  for (;;) {
    try {
      const node = await client.get(nodes, name);
      return { node, ips: nodeIPs(node) };
    } catch (err) {
      if (clock.now() >= deadline) {
        logger.warn("cannot read this node's object; assuming loopback, set --bind-address if wrong", {
          node: name,
          error: isNotFound(err) ? "not found" : err,
        });
        return { node: undefined, ips: {} };
      }
    }
    await sleep(clock, 1000);
  }
}
