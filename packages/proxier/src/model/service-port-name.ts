// Identity of one port of one Service, the key of both the service and endpoints maps.

export type Protocol = "TCP" | "UDP" | "SCTP";

export interface ServicePortName {
  readonly namespace: string;
  readonly name: string;
  /** The Service port's name; "" for an unnamed port. */
  readonly port: string;
  readonly protocol: Protocol;
}

/** "ns/name" of a Service. */
export function namespacedName(ns: string, name: string): string {
  return `${ns}/${name}`;
}

/**
 * "ns/name:port" (or "ns/name" for an unnamed port), the form kube-proxy prints in rule
 * comments and element comments. The protocol is deliberately not part of it.
 */
export function servicePortNameString(spn: ServicePortName): string {
  const base = namespacedName(spn.namespace, spn.name);
  return spn.port === "" ? base : `${base}:${spn.port}`;
}

/** Unique map key: the printed name plus the protocol (a port name may repeat across protocols). */
export function servicePortKey(spn: ServicePortName): string {
  return `${servicePortNameString(spn)}/${spn.protocol}`;
}

export function isProtocol(value: unknown): value is Protocol {
  return value === "TCP" || value === "UDP" || value === "SCTP";
}

/** "ns/name" of the Service a servicePortKey belongs to. */
export function serviceOfPortKey(key: string): string {
  const slash = key.indexOf("/");
  let end = slash + 1;
  while (end < key.length && key[end] !== ":" && key[end] !== "/") end++;
  return key.slice(0, end);
}
