// The one definition of the eBPF mode's maps: each key and value struct field by field, and each map's kind and
// name. bpf/gen-layout.mjs writes the C header the programs include from it (at build time, never by hand), and
// the codecs in codec.ts read and write the same bytes from TypeScript. The shapes follow Cilium's lb4_*/lb6_*
// maps: a service entry per (frontend, scope; the internal scope only where it differs) whose slot 0 holds the
// backend count, slots 1..n naming backends by id, backends by id, reverse NAT by index, two maps only the
// programs write (sockets' original peers, ClientIP affinity), and the flows whose sockets the socket-destroy
// iterator is to end.

import type { IPFamily } from "@switchyard/basics";

/** Field types. `ip` is 4 bytes in an IPv4 map and 16 in an IPv6 one; `be*` hold network byte order. */
export type FieldType = "u8" | "u16" | "u32" | "u64" | "be16" | "ip";

export interface Field {
  readonly name: string;
  readonly type: FieldType;
  /** Padding one family needs and the other does not (keys are compared byte for byte: no implicit padding). */
  readonly onlyIn?: IPFamily;
}

export interface Struct {
  /** C name without the family prefix: "lb_key" becomes `struct lb4_key` / `struct lb6_key`. */
  readonly name: string;
  readonly fields: readonly Field[];
}

/** The fields one family's struct has. */
export function fieldsOf(struct: Struct, family: IPFamily): Field[] {
  return struct.fields.filter((f) => f.onlyIn === undefined || f.onlyIn === family);
}

/** An address is an array of 32-bit words in C (`__be32 address[4]` in IPv6): aligned to 4. */
export function fieldAlignment(type: FieldType, family: IPFamily): number {
  return type === "ip" ? 4 : fieldSize(type, family);
}

/** Natural alignment everywhere: fields are ordered so that no padding is needed, and structLayout checks it. */
export function fieldSize(type: FieldType, family: IPFamily): number {
  switch (type) {
    case "u8":
      return 1;
    case "u16":
    case "be16":
      return 2;
    case "u32":
      return 4;
    case "u64":
      return 8;
    case "ip":
      return family === "IPv6" ? 16 : 4;
  }
}

/** Where each field sits, and the struct's size, for one family. */
export interface StructLayout {
  readonly name: string;
  readonly size: number;
  readonly offsets: Readonly<Record<string, number>>;
}

export function structLayout(struct: Struct, family: IPFamily): StructLayout {
  const offsets: Record<string, number> = {};
  let at = 0;
  const fields = fieldsOf(struct, family);
  for (const f of fields) {
    if (at % fieldAlignment(f.type, family) !== 0) {
      throw new Error(`${struct.name}.${f.name} is not aligned (offset ${at})`);
    }
    offsets[f.name] = at;
    at += fieldSize(f.type, family);
  }
  const align = Math.max(...fields.map((f) => fieldAlignment(f.type, family)));
  if (at % align !== 0) throw new Error(`${struct.name} needs tail padding (size ${at}, alignment ${align})`);
  return { name: `${familyPrefix(family)}${struct.name.replace(/^lb_/, "_")}`, size: at, offsets };
}

/** "lb4" or "lb6": Cilium's prefix, and ours. */
export function familyPrefix(family: IPFamily): "lb4" | "lb6" {
  return family === "IPv6" ? "lb6" : "lb4";
}

// ---- structs ----

/** A frontend (address, port, protocol) in one scope; backendSlot 0 is the service entry itself. */
export const serviceKey = {
  name: "lb_key",
  fields: [
    { name: "address", type: "ip" },
    { name: "dport", type: "be16" },
    { name: "backendSlot", type: "u16" },
    { name: "proto", type: "u8" },
    { name: "scope", type: "u8" },
    { name: "pad", type: "u16" },
  ],
} as const satisfies Struct;

/**
 * Slot 0: count (backends to choose among, slots 1..count), revNatIndex, flags and, with ClientIP affinity, the
 * timeout in seconds in affinityTimeout. Slots 1..n: backendId, and revNatIndex again.
 */
export const serviceValue = {
  name: "lb_service",
  fields: [
    { name: "backendId", type: "u32" },
    { name: "affinityTimeout", type: "u32" },
    { name: "count", type: "u16" },
    { name: "revNatIndex", type: "u16" },
    { name: "flags", type: "u16" },
    { name: "pad", type: "u16" },
  ],
} as const satisfies Struct;

export const backendKey = {
  name: "lb_backend_key",
  fields: [{ name: "backendId", type: "u32" }],
} as const satisfies Struct;

export const backendValue = {
  name: "lb_backend",
  fields: [
    { name: "address", type: "ip" },
    { name: "port", type: "be16" },
    { name: "proto", type: "u8" },
    { name: "flags", type: "u8" },
  ],
} as const satisfies Struct;

export const revNatKey = {
  name: "lb_rev_nat_key",
  fields: [
    { name: "revNatIndex", type: "u16" },
    { name: "pad", type: "u16" },
  ],
} as const satisfies Struct;

/** The frontend replies must appear to come from. */
export const revNatValue = {
  name: "lb_rev_nat",
  fields: [
    { name: "address", type: "ip" },
    { name: "port", type: "be16" },
    { name: "pad", type: "u16" },
  ],
} as const satisfies Struct;

/** A socket (by cookie) and the backend it was sent to: recvmsg and getpeername give back the frontend. */
export const reverseSockKey = {
  name: "lb_reverse_sk_key",
  fields: [
    { name: "cookie", type: "u64" },
    { name: "address", type: "ip" },
    { name: "port", type: "be16" },
    { name: "pad", type: "u16" },
    { name: "pad6", type: "u32", onlyIn: "IPv6" },
  ],
} as const satisfies Struct;

export const reverseSockValue = {
  name: "lb_reverse_sk",
  fields: [
    { name: "address", type: "ip" },
    { name: "port", type: "be16" },
    { name: "revNatIndex", type: "u16" },
  ],
} as const satisfies Struct;

/** ClientIP affinity: the client (its network namespace cookie for socket-level balancing) and the service. */
export const affinityKey = {
  name: "lb_affinity_key",
  fields: [
    { name: "clientId", type: "u64" },
    { name: "revNatIndex", type: "u16" },
    { name: "pad", type: "u16" },
    { name: "pad2", type: "u32" },
  ],
} as const satisfies Struct;

export const affinityValue = {
  name: "lb_affinity",
  fields: [
    { name: "lastUsed", type: "u64" },
    { name: "backendId", type: "u32" },
    { name: "pad", type: "u32" },
  ],
} as const satisfies Struct;

/**
 * A flow the proxy wants ended (bpf/sock-destroy.c): a connected UDP socket the programs sent from this frontend
 * to this backend, which no longer serves it. Filled before each run of the iterator and emptied after it.
 */
export const staleFlowKey = {
  name: "lb_stale_flow_key",
  fields: [
    { name: "frontendAddress", type: "ip" },
    { name: "backendAddress", type: "ip" },
    { name: "frontendPort", type: "be16" },
    { name: "backendPort", type: "be16" },
  ],
} as const satisfies Struct;

/** How many sockets of that flow the iterator ended (it adds; the proxy reads the sum back). */
export const staleFlowValue = {
  name: "lb_stale_flow",
  fields: [{ name: "ended", type: "u32" }],
} as const satisfies Struct;

/** The masquerade map's one key: slot 0 holds the node's address of the family. */
export const masqueradeKey = {
  name: "lb_masquerade_key",
  fields: [{ name: "slot", type: "u32" }],
} as const satisfies Struct;

/**
 * The node's address the tc programs give traffic from outside as its source on the way to a backend (unless
 * EXTERNAL_LOCAL), so that the backend's replies come back through this node to be translated back.
 */
export const masqueradeValue = {
  name: "lb_masquerade",
  fields: [{ name: "address", type: "ip" }],
} as const satisfies Struct;

/**
 * A loadBalancerSourceRanges entry: the range `address`/(prefixLen - 32) of the frontend with this reverse NAT
 * index. An LPM trie key: the kernel matches the first prefixLen bits after the prefixLen field itself, so the
 * index and its padding (32 bits) always match whole and the address as far as the range's length.
 */
export const sourceRangeKey = {
  name: "lb_src_range_key",
  fields: [
    { name: "prefixLen", type: "u32" },
    { name: "revNatIndex", type: "u16" },
    { name: "pad", type: "u16" },
    { name: "address", type: "ip" },
  ],
} as const satisfies Struct;

/** Present means allowed; the byte itself is always 1. */
export const sourceRangeValue = {
  name: "lb_src_range",
  fields: [{ name: "allowed", type: "u8" }],
} as const satisfies Struct;

/** The bits of a source range key before the address: the reverse NAT index and its padding. */
export const SOURCE_RANGE_KEY_BITS = 32;

export const structs = [
  serviceKey,
  serviceValue,
  backendKey,
  backendValue,
  revNatKey,
  revNatValue,
  reverseSockKey,
  reverseSockValue,
  affinityKey,
  affinityValue,
  staleFlowKey,
  staleFlowValue,
  masqueradeKey,
  masqueradeValue,
  sourceRangeKey,
  sourceRangeValue,
] as const;

// ---- constants both sides read ----

/**
 * Scope of a service entry. The external scope is always there and serves traffic from outside the node (tc); the
 * internal one, for traffic started on the node (socket-level balancing), is written only when it differs, and
 * the external slot 0's TWO_SCOPES flag says so (as Cilium's two-scope services).
 */
export const SCOPE_EXTERNAL = 0;
export const SCOPE_INTERNAL = 1;

/** IP protocol numbers, as in the kernel's socket and packet headers. */
export const PROTO_TCP = 6;
export const PROTO_UDP = 17;
export const PROTO_SCTP = 132;

/** Service entry flags (slot 0). */
export const serviceFlags = {
  /** No endpoint anywhere: refuse (ECONNREFUSED at connect, ICMP unreachable from tc). */
  REJECT: 1 << 0,
  /** Endpoints exist but this policy has none on this node: drop (from tc), refuse at connect. */
  DROP: 1 << 1,
  /** ClientIP session affinity; affinityTimeout holds the seconds. */
  AFFINITY: 1 << 2,
  /** A ClusterIP frontend (the others are NodePort, external IP and load-balancer frontends). */
  CLUSTER_IP: 1 << 3,
  NODE_PORT: 1 << 4,
  EXTERNAL_IP: 1 << 5,
  LOAD_BALANCER: 1 << 6,
  /** loadBalancerSourceRanges apply to this frontend. */
  SOURCE_RANGES: 1 << 7,
  /** External traffic policy Local: traffic from outside keeps its source (no masquerade). */
  EXTERNAL_LOCAL: 1 << 8,
  /**
   * On the external scope's slot 0 only: the node's own sockets balance over the internal scope's entries, which
   * differ. Without it a frontend has no internal entries and every program reads the external ones.
   */
  TWO_SCOPES: 1 << 9,
} as const;

/** Backend flags. */
export const backendFlags = {
  /** Serving but terminating: chosen only as a fallback (the renderer decides; the flag is for tools). */
  TERMINATING: 1 << 0,
  /** Runs on this node. */
  LOCAL: 1 << 1,
} as const;

export type MapKind = "hash" | "lru_hash" | "lpm_trie";

/** BPF_F_NO_PREALLOC: the kernel creates an LPM trie only with it (its nodes are allocated as inserted). */
export const BPF_F_NO_PREALLOC = 1;

/** The map_flags a map is created with. */
export function mapFlagsOf(spec: MapSpec): number {
  return spec.kind === "lpm_trie" ? BPF_F_NO_PREALLOC : 0;
}

export interface MapSpec {
  /** Without the family prefix; the kernel name is e.g. `lb4_services` (at most 15 characters). */
  readonly name: string;
  readonly kind: MapKind;
  readonly key: Struct;
  readonly value: Struct;
  /** The renderer's maps are sized from the cluster at load time; these are the programs' own. */
  readonly defaultMaxEntries: number;
  /** Written by the proxy (true) or only by the programs. */
  readonly ownedByProxy: boolean;
}

export const maps = {
  services: {
    name: "services",
    kind: "hash",
    key: serviceKey,
    value: serviceValue,
    defaultMaxEntries: 65536,
    ownedByProxy: true,
  },
  backends: {
    name: "backends",
    kind: "hash",
    key: backendKey,
    value: backendValue,
    defaultMaxEntries: 65536,
    ownedByProxy: true,
  },
  revNat: {
    name: "reverse_nat",
    kind: "hash",
    key: revNatKey,
    value: revNatValue,
    defaultMaxEntries: 65536,
    ownedByProxy: true,
  },
  reverseSock: {
    name: "reverse_sk",
    kind: "lru_hash",
    key: reverseSockKey,
    value: reverseSockValue,
    defaultMaxEntries: 262144,
    ownedByProxy: false,
  },
  affinity: {
    name: "affinity",
    kind: "lru_hash",
    key: affinityKey,
    value: affinityValue,
    defaultMaxEntries: 65536,
    ownedByProxy: false,
  },
  /**
   * Read by the socket-destroy iterator only (a separate object: the socket programs do not use it, but the
   * loader creates and pins it with the rest so that both objects share one). A run takes at most this many
   * flows; more are ended over several runs.
   */
  staleFlows: {
    name: "stale_flows",
    kind: "hash",
    key: staleFlowKey,
    value: staleFlowValue,
    defaultMaxEntries: 4096,
    ownedByProxy: true,
  },
  /** Written by the tc loader (bpf-tc.ts) from the addresses its caller gives; read by the tc programs. */
  masquerade: {
    name: "masquerade",
    kind: "hash",
    key: masqueradeKey,
    value: masqueradeValue,
    defaultMaxEntries: 1,
    ownedByProxy: true,
  },
  /**
   * loadBalancerSourceRanges by reverse NAT index (Cilium's lb4_source_range; a shorter name fits the kernel's 15
   * characters). A frontend whose slot 0 has SOURCE_RANGES admits a source only if a longest-prefix lookup of
   * (its index, the source) finds an entry.
   */
  sourceRange: {
    name: "src_range",
    kind: "lpm_trie",
    key: sourceRangeKey,
    value: sourceRangeValue,
    defaultMaxEntries: 65536,
    ownedByProxy: true,
  },
} as const satisfies Record<string, MapSpec>;

export type MapName = keyof typeof maps;

/** The kernel's name of a map, e.g. "lb4_services". */
export function kernelMapName(spec: MapSpec, family: IPFamily): string {
  return `${familyPrefix(family)}_${spec.name}`;
}
