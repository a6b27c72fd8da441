// The proxy-owned maps decoded: service entries by name, backends by id, reverse NAT by index. The renderer's
// state, the fake's dump, the tracer and the service-table formatter all speak this one form, and the names it
// gives entries ("172.30.0.41:80/TCP external slot 0") are the ones traces and golden files show.

import { hostPort, type IPFamily } from "@switchyard/basics";
import type { Protocol } from "../model/service-port-name.js";
import { decodeStruct, type RecordOf } from "./codec.js";
import {
  backendKey,
  backendValue,
  PROTO_SCTP,
  PROTO_TCP,
  PROTO_UDP,
  revNatKey,
  revNatValue,
  SCOPE_INTERNAL,
  serviceKey,
  serviceValue,
} from "./layout.js";
import { decodeSourceRangeKey } from "./source-ranges.js";

export type ServiceKeyRecord = RecordOf<typeof serviceKey>;
export type ServiceValueRecord = RecordOf<typeof serviceValue>;
export type BackendRecord = RecordOf<typeof backendValue>;
export type RevNatRecord = RecordOf<typeof revNatValue>;

export interface ServiceEntry {
  readonly key: ServiceKeyRecord;
  readonly value: ServiceValueRecord;
}

/** The maps the proxy writes, as one family's programs read them. */
export interface MapContents {
  readonly family: IPFamily;
  /** By serviceEntryName of the key. */
  readonly services: ReadonlyMap<string, ServiceEntry>;
  /** By backend id. */
  readonly backends: ReadonlyMap<number, BackendRecord>;
  /** By reverse NAT index. */
  readonly revNat: ReadonlyMap<number, RevNatRecord>;
  /** loadBalancerSourceRanges: reverse NAT index → the ranges (CIDR text) it admits. Absent: not read. */
  readonly sourceRanges?: ReadonlyMap<number, readonly string[]>;
}

/** The maps MapContents holds: the ones the proxy owns. */
export type ContentsMapName = "services" | "backends" | "revNat";

const PROTOCOL_NUMBERS: Readonly<Record<Protocol, number>> = {
  TCP: PROTO_TCP,
  UDP: PROTO_UDP,
  SCTP: PROTO_SCTP,
};

export function protocolNumber(protocol: Protocol): number {
  return PROTOCOL_NUMBERS[protocol];
}

/** "TCP", "UDP", "SCTP", or the number for anything else (a map written by someone else). */
export function protocolName(proto: number): string {
  if (proto === PROTO_TCP) return "TCP";
  if (proto === PROTO_UDP) return "UDP";
  if (proto === PROTO_SCTP) return "SCTP";
  return `proto-${proto}`;
}

/** A frontend or backend as text: "172.30.0.41:80/TCP", "[fd00::1]:80/UDP". */
export function addressName(address: string, port: number, proto: number): string {
  return `${hostPort(address, port)}/${protocolName(proto)}`;
}

export function scopeName(scope: number): "internal" | "external" {
  return scope === SCOPE_INTERNAL ? "internal" : "external";
}

/** A service entry's name: "172.30.0.41:80/TCP external slot 0". */
export function serviceEntryName(key: ServiceKeyRecord): string {
  return `${addressName(key.address, key.dport, key.proto)} ${scopeName(key.scope)} slot ${key.backendSlot}`;
}

/** Raw dumps of the proxy-owned maps decoded (what a BPFMapStore's dump returns). */
export function decodeContents(
  family: IPFamily,
  dumps: Readonly<Record<ContentsMapName, readonly (readonly [Uint8Array, Uint8Array])[]>> & {
    readonly sourceRange?: readonly (readonly [Uint8Array, Uint8Array])[];
  },
): MapContents {
  const services = new Map<string, ServiceEntry>();
  for (const [k, v] of dumps.services) {
    const key = decodeStruct(serviceKey, family, k);
    services.set(serviceEntryName(key), { key, value: decodeStruct(serviceValue, family, v) });
  }
  const backends = new Map<number, BackendRecord>();
  for (const [k, v] of dumps.backends) {
    backends.set(decodeStruct(backendKey, family, k).backendId, decodeStruct(backendValue, family, v));
  }
  const revNat = new Map<number, RevNatRecord>();
  for (const [k, v] of dumps.revNat) {
    revNat.set(decodeStruct(revNatKey, family, k).revNatIndex, decodeStruct(revNatValue, family, v));
  }
  if (!dumps.sourceRange) return { family, services, backends, revNat };
  const ranges = new Map<number, string[]>();
  for (const [k] of dumps.sourceRange) {
    const { revNatIndex, range } = decodeSourceRangeKey(family, k);
    const list = ranges.get(revNatIndex);
    if (list) list.push(range);
    else ranges.set(revNatIndex, [range]);
  }
  for (const list of ranges.values()) list.sort();
  return { family, services, backends, revNat, sourceRanges: ranges };
}
