// Virtual and real servers as plain data, and how ipvsadm spells them.
import type { Protocol } from "../model/service-port-name.js";

export interface VirtualServer {
  readonly protocol: Protocol;
  readonly address: string;
  readonly port: number;
  readonly scheduler: string;
  /** ClientIP affinity: persistence timeout in seconds; 0 when the service has none. */
  readonly persistence: number;
  /** Scheduler flags (ipvsadm -b), e.g. "mh-port". */
  readonly schedFlags: readonly string[];
}

export interface RealServer {
  readonly address: string;
  readonly port: number;
  /** 1 for a live endpoint; 0 while a removed endpoint drains its connections. */
  readonly weight: number;
}

/** A virtual server with the real servers the kernel holds (or should hold) behind it. */
export interface VirtualServerEntry {
  readonly vs: VirtualServer;
  /** Keyed by hostPort(). */
  readonly reals: ReadonlyMap<string, RealServer>;
}

/** "ip:port", bracketing IPv6 addresses as ipvsadm and Go's JoinHostPort do. */
export function hostPort(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

/** Identity of a virtual server: one per (protocol, address, port). */
export function vsKey(vs: Pick<VirtualServer, "protocol" | "address" | "port">): string {
  return `${vs.protocol} ${hostPort(vs.address, vs.port)}`;
}

/** ipvsadm's service-address option: -t, -u or --sctp-service. */
export function serviceArgs(vs: Pick<VirtualServer, "protocol" | "address" | "port">): string {
  const flag = vs.protocol === "TCP" ? "-t" : vs.protocol === "UDP" ? "-u" : "--sctp-service";
  return `${flag} ${hostPort(vs.address, vs.port)}`;
}

/** The options that describe a virtual server beyond its address (scheduler, persistence, flags). */
export function scheduleArgs(vs: VirtualServer): string {
  const parts = [`-s ${vs.scheduler}`];
  if (vs.persistence > 0) parts.push(`-p ${vs.persistence}`);
  if (vs.schedFlags.length > 0) parts.push(`-b ${vs.schedFlags.join(",")}`);
  return parts.join(" ");
}

export function sameSchedule(a: VirtualServer, b: VirtualServer): boolean {
  return scheduleArgs(a) === scheduleArgs(b);
}

/** Real servers always use masquerading (-m): kube-proxy never sets a forwarding method. */
export function realArgs(vs: VirtualServer, rs: RealServer): string {
  return `${serviceArgs(vs)} -r ${hostPort(rs.address, rs.port)} -m -w ${rs.weight}`;
}

/** Byte-wise ordering (not locale-aware), so output is stable everywhere. */
export function byKey<T>(key: (t: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}
