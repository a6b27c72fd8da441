// What `explain --from` and `--to` name, and how they are found among the API's objects. Pure: the command
// lists the objects, these functions pick from them, and every miss is a one-line error saying what was
// looked for and what exists.

import { cidrContainsText, toBig } from "@switchyard/basics";
import type { Node, Service, ServicePort } from "kubernetes-types/core/v1.js";
import type { ServiceEntry } from "./why.js";

export type FromSpec = { kind: "pod"; namespace: string; name: string } | { kind: "ip"; ip: string };
export type ToSpec =
  | { kind: "service"; namespace: string; name: string; port?: string }
  | { kind: "address"; ip: string; port: number };
export type Protocol = "TCP" | "UDP";

/** Whether `text` is an IPv4 or IPv6 address. */
export function isIP(text: string): boolean {
  try {
    toBig(text);
    return /^[0-9a-fA-F.:]+$/.test(text);
  } catch {
    return false;
  }
}

/** "ns/name" or "name" (namespace default). */
function namespaced(text: string): { namespace: string; name: string } {
  const [a = "", b] = text.split("/");
  return b === undefined ? { namespace: "default", name: a } : { namespace: a, name: b };
}

export function parseFrom(text: string): FromSpec {
  if (isIP(text)) return { kind: "ip", ip: text };
  if (!/^([a-z0-9-]+\/)?[a-z0-9.-]+$/.test(text))
    throw new Error(`--from ${text}: neither a pod (NAME or NAMESPACE/NAME) nor an IP address`);
  return { kind: "pod", ...namespaced(text) };
}

export function parseTo(text: string): ToSpec {
  // a.b.c.d:port or [v6]:port
  const address = /^(?:([\d.]+)|\[([0-9a-fA-F:.]+)\]):(\d+)$/.exec(text);
  const ip = address?.[1] ?? address?.[2] ?? "";
  if (address && isIP(ip)) {
    const port = Number(address[3]);
    if (port < 1 || port > 65535) throw new Error(`--to ${text}: port ${address[3]} is not 1-65535`);
    return { kind: "address", ip, port };
  }
  if (isIP(text) || isIP(text.replace(/^\[|\]$/g, "")))
    throw new Error(`--to ${text}: an address needs a port (IP:PORT, [IPv6]:PORT)`);
  const m = /^((?:[a-z0-9-]+\/)?[a-z0-9.-]+)(?::([a-z0-9-]+))?$/.exec(text);
  if (!m) throw new Error(`--to ${text}: neither a Service (NAME, NAMESPACE/NAME, with :PORT) nor IP:PORT`);
  return { kind: "service", ...namespaced(m[1] ?? ""), ...(m[2] ? { port: m[2] } : {}) };
}

const portLabel = (p: ServicePort) =>
  p.name ? `${p.name} (${p.port}/${p.protocol ?? "TCP"})` : `${p.port}/${p.protocol ?? "TCP"}`;

/** The Service port `want` names (by name or number), or its only port of `protocol`. */
export function pickServicePort(svc: Service, want: string | undefined, protocol?: Protocol): ServicePort {
  const id = `${svc.metadata?.namespace}/${svc.metadata?.name}`;
  const ports = (svc.spec?.ports ?? []).filter((p) => !protocol || (p.protocol ?? "TCP") === protocol);
  const found = want === undefined ? ports : ports.filter((p) => p.name === want || String(p.port) === want);
  if (found.length === 1 && found[0]) return found[0];
  const all = (svc.spec?.ports ?? []).map(portLabel).join(", ") || "none";
  if (found.length === 0)
    throw new Error(
      `Service ${id} has no port ${want ?? ""}${protocol ? ` over ${protocol}` : ""} (ports: ${all})`,
    );
  throw new Error(`Service ${id} has several ports (${all}); name one: --to ${id}:PORT`);
}

export interface ServiceAtAddress {
  service: Service;
  port: ServicePort;
  entry: ServiceEntry;
}

/** The Service port an ip:port reaches: a ClusterIP, an external IP, a load-balancer IP or a NodePort on a node. */
export function serviceAt(
  services: readonly Service[],
  ip: string,
  port: number,
  protocol: Protocol,
  nodeIPs: readonly string[],
): ServiceAtAddress | undefined {
  for (const service of services) {
    const spec = service.spec ?? {};
    for (const p of spec.ports ?? []) {
      if ((p.protocol ?? "TCP") !== protocol) continue;
      const on = (entry: ServiceEntry) => ({ service, port: p, entry });
      if (p.port === port && (spec.clusterIPs ?? [spec.clusterIP]).includes(ip)) return on("ClusterIP");
      if (p.port === port && (spec.externalIPs ?? []).includes(ip)) return on("ExternalIP");
      if (p.port === port && (service.status?.loadBalancer?.ingress ?? []).some((i) => i.ip === ip))
        return on("LoadBalancer");
      if (p.nodePort === port && nodeIPs.includes(ip)) return on("NodePort");
    }
  }
  return undefined;
}

/** The node whose pod range (spec.podCIDRs) holds `ip`. */
export function podRangeNode(nodes: readonly Node[], ip: string): Node | undefined {
  return nodes.find((n) =>
    (n.spec?.podCIDRs ?? [n.spec?.podCIDR ?? ""]).some((c) => c !== "" && cidrContainsText(c, ip)),
  );
}

/** The node whose rules the packet meets: --node, else the node the source pod or address belongs to. */
export function nodeFor(
  nodes: readonly Node[],
  sourceIP: string,
  podNode: string | undefined,
  flag?: string,
): string {
  const names = nodes.map((n) => n.metadata?.name ?? "");
  if (flag !== undefined) {
    if (!names.includes(flag)) throw new Error(`--node ${flag}: no such node (nodes: ${names.join(", ")})`);
    return flag;
  }
  if (podNode) return podNode;
  const byAddress = nodes.find((n) => (n.status?.addresses ?? []).some((a) => a.address === sourceIP));
  const node = byAddress ?? podRangeNode(nodes, sourceIP);
  if (!node)
    throw new Error(
      `--from ${sourceIP} is no node's address and in no node's pod range: name the node whose rules to read with --node (${names.join(", ")})`,
    );
  return node.metadata?.name ?? "";
}
