// Walks a connection through the maps as the programs would: traffic started on this node (origin "node") as
// the socket-level programs see it at connect/sendmsg, traffic from outside (origin "external") as the tc
// programs on the node's devices see it. Both look the external scope up; the socket programs go on to the
// internal scope when that entry's flags say TWO_SCOPES. It reads only what the maps hold (MapContents), so it
// traces the fake's bytes or a live node's dump alike, and gives back the tracers' shared result: one path per
// backend slot with its probability, or REJECT/DROP, or ACCEPT when the destination is no frontend (not a
// service: nothing is translated). A frontend with SOURCE_RANGES admits the packet's sourceIP only if its ranges
// hold it; for origin "node" that is the address the socket programs judge: the socket's bound address, else the
// node's (README's eBPF section).

import { hostPort } from "@switchyard/basics";
import {
  startPacket,
  type TracedPacket,
  type TracePacket,
  type TraceResult,
  type TraceStep,
  traceResult,
} from "../model/trace.js";
import { type MapContents, protocolNumber, type ServiceEntry, serviceEntryName } from "./contents.js";
import { backendText, revNatText, serviceFlagNames } from "./contents-text.js";
import { familyPrefix, SCOPE_EXTERNAL, SCOPE_INTERNAL, serviceFlags } from "./layout.js";
import { sourceAdmitted } from "./source-ranges.js";

export interface EBPFTracePacket extends TracePacket {
  /** Where the connection starts: a socket on this node (pod or host), or a packet from outside. */
  readonly origin: "node" | "external";
}

type Outcome = { pkt: TracedPacket; verdict?: string };

/** The program that looks the frontend up. */
function programOf(contents: MapContents, packet: EBPFTracePacket): string {
  const v = contents.family === "IPv6" ? "6" : "4";
  if (packet.origin === "external") return "tc ingress";
  return packet.protocol === "udp" ? `sendmsg${v}` : `connect${v}`;
}

export function traceEBPF(contents: MapContents, packet: EBPFTracePacket): TraceResult {
  const pkt = startPacket(packet);
  const errors: string[] = [];
  const prefix = familyPrefix(contents.family);
  const program = programOf(contents, packet);
  const step = (map: string, rule: string, note?: string): TraceStep => ({
    table: `${prefix}_${map}`,
    chain: program,
    rule,
    ...(note === undefined ? {} : { note }),
  });
  const protocol = (packet.protocol ?? "tcp").toUpperCase() as "TCP" | "UDP" | "SCTP";
  const external = {
    address: packet.destIP,
    dport: packet.destPort,
    backendSlot: 0,
    proto: protocolNumber(protocol),
    scope: SCOPE_EXTERNAL,
  };
  const found = lookupHead(contents, external, packet.origin, errors);
  pkt.steps = found.steps.map(([name, note]) => step("services", name, note));
  const { key, head } = found;
  if (!head) return traceResult([{ pkt }], errors);
  const headName = serviceEntryName(key);
  const v = head.value;
  if (v.flags & serviceFlags.SOURCE_RANGES) {
    const ranges = contents.sourceRanges?.get(v.revNatIndex);
    if (!contents.sourceRanges) errors.push(`${headName}: SOURCE_RANGES but the source ranges were not read`);
    const admitted = sourceAdmitted(ranges, packet.sourceIP);
    const rule = `revNat ${v.revNatIndex} ${packet.sourceIP}`;
    const note = `${admitted ? "admitted by" : "outside"} ${ranges?.join(", ") || "no range"}`;
    pkt.steps = [...pkt.steps, step("src_range", rule, note)];
    if (!admitted) return traceResult([{ pkt, verdict: "drop" }], errors);
  }
  if (v.count === 0) {
    if ((v.flags & (serviceFlags.REJECT | serviceFlags.DROP)) === 0)
      errors.push(`${headName}: count 0 without REJECT or DROP`);
    return traceResult([{ pkt, verdict: v.flags & serviceFlags.REJECT ? "reject" : "drop" }], errors);
  }
  // Replies from outside are un-NATed by the tc programs; only a Local external policy keeps the source.
  pkt.masq = packet.origin === "external" && (v.flags & serviceFlags.EXTERNAL_LOCAL) === 0;
  const outcomes: Outcome[] = [];
  for (let slot = 1; slot <= v.count; slot++) {
    const branch: TracedPacket = { ...pkt, probability: pkt.probability / v.count };
    const outcome = followSlot(contents, { ...key, backendSlot: slot }, head, branch, step, errors);
    if (outcome) outcomes.push(outcome);
  }
  return traceResult(outcomes, errors);
}

type ServiceKey = Parameters<typeof serviceEntryName>[0];

/**
 * The slot 0 the program balances over, and the entries it read on the way ([name, note] each): the external
 * scope's, or for the node's own sockets the internal scope's when the external entry says TWO_SCOPES.
 */
function lookupHead(
  contents: MapContents,
  external: ServiceKey,
  origin: EBPFTracePacket["origin"],
  errors: string[],
): { key: ServiceKey; head?: ServiceEntry; steps: Array<[string, string]> } {
  const externalName = serviceEntryName(external);
  const first = contents.services.get(externalName);
  if (!first) return { key: external, steps: [[externalName, "no entry: not a service, left as it is"]] };
  const twoScopes = (first.value.flags & serviceFlags.TWO_SCOPES) !== 0;
  if (origin === "external" || !twoScopes) {
    return { key: external, head: first, steps: [[externalName, headNote(contents, first)]] };
  }
  const internal = { ...external, scope: SCOPE_INTERNAL };
  const internalName = serviceEntryName(internal);
  const head = contents.services.get(internalName);
  const flags = `flags ${serviceFlagNames(first.value.flags)}: this node's sockets read the internal scope`;
  if (!head) errors.push(`${externalName} says TWO_SCOPES but ${internalName} is missing`);
  const note = head ? headNote(contents, head) : "no entry: the program takes it for no service";
  return {
    key: internal,
    ...(head ? { head } : {}),
    steps: [
      [externalName, flags],
      [internalName, note],
    ],
  };
}

/** Slot 0's value, and what applies to the whole frontend. */
function headNote(contents: MapContents, head: ServiceEntry): string {
  const v = head.value;
  const parts = [`count ${v.count}`, `revNat ${v.revNatIndex}`, `flags ${serviceFlagNames(v.flags) || "-"}`];
  if (v.flags & serviceFlags.AFFINITY) {
    parts.push(`ClientIP affinity ${v.affinityTimeout}s: a client seen before goes back to its backend`);
  }
  if (!contents.revNat.has(v.revNatIndex)) parts.push(`reverse NAT ${v.revNatIndex} missing`);
  return parts.join(", ");
}

function followSlot(
  contents: MapContents,
  key: ServiceKey,
  head: ServiceEntry,
  pkt: TracedPacket,
  step: (map: string, rule: string, note?: string) => TraceStep,
  errors: string[],
): Outcome | undefined {
  const name = serviceEntryName(key);
  const slot = contents.services.get(name);
  if (!slot) {
    errors.push(`${serviceEntryName(head.key)} counts ${head.value.count} but ${name} is missing`);
    return undefined;
  }
  const id = slot.value.backendId;
  const backend = contents.backends.get(id);
  pkt.steps = [
    ...pkt.steps,
    step("services", name, `slot ${key.backendSlot} of ${head.value.count}: backend ${id}`),
  ];
  if (!backend) {
    errors.push(`${name} names missing backend ${id}`);
    return undefined;
  }
  const revNat = contents.revNat.get(slot.value.revNatIndex);
  pkt.steps = [
    ...pkt.steps,
    step("backends", `id ${id}`, backendText(backend)),
    step(
      "reverse_nat",
      `index ${slot.value.revNatIndex}`,
      revNat ? `replies from ${revNatText(revNat)}` : "missing",
    ),
  ];
  if (!revNat) errors.push(`${name} names missing reverse NAT ${slot.value.revNatIndex}`);
  if (backend.proto !== key.proto) errors.push(`${name}: backend ${id} has protocol ${backend.proto}`);
  pkt.dnat = hostPort(backend.address, backend.port);
  pkt.dst = backend.address;
  pkt.dport = backend.port;
  return { pkt, verdict: "accept" };
}
