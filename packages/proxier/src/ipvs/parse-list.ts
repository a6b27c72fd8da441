// Reads `ipvsadm -Ln` back into the table renderIPVS diffs against, plus the real servers
// that still carry connections. Virtual servers ipvsadm shows by firewall mark (FWM) are
// someone else's: kube-proxy never creates them.

import { normalizeIP } from "@switchyard/basics";
import type { Protocol } from "../model/service-port-name.js";
import type { IPVSTable } from "./ipvsadm.js";
import { realServerName } from "./ipvsadm.js";
import { hostPort, type RealServer, type VirtualServer, vsKey } from "./virtual-server.js";

const PROTOCOLS: Readonly<Record<string, Protocol>> = { TCP: "TCP", UDP: "UDP", SCTP: "SCTP" };

function parseAddress(text: string): { address: string; port: number } | undefined {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  const address = m?.[1] === undefined ? null : normalizeIP(m[1]);
  return address === null || m?.[2] === undefined ? undefined : { address, port: Number(m[2]) };
}

/** Service line flags: "persistent N" is affinity; "mask", "pe" and "ops" carry no state we write. */
function parseFlags(words: readonly string[]): { persistence: number; schedFlags: string[] } {
  let persistence = 0;
  const schedFlags: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? "";
    if (w === "persistent") persistence = Number(words[++i] ?? 0);
    else if (w === "mask" || w === "pe") i++;
    else if (w !== "ops") schedFlags.push(...w.split(",").filter((f) => f !== ""));
  }
  return { persistence, schedFlags };
}

export function parseIPVSList(text: string): { table: IPVSTable; busy: Set<string> } {
  const table = new Map<string, { vs: VirtualServer; reals: Map<string, RealServer> }>();
  const busy = new Set<string>();
  let current: { vs: VirtualServer; reals: Map<string, RealServer> } | undefined;
  for (const line of text.split("\n")) {
    const words = line.trim().split(/\s+/);
    const protocol = PROTOCOLS[words[0] ?? ""];
    if (protocol !== undefined && !line.startsWith(" ")) {
      const at = parseAddress(words[1] ?? "");
      current = undefined;
      if (at === undefined) continue;
      const vs: VirtualServer = { protocol, ...at, scheduler: words[2] ?? "", ...parseFlags(words.slice(3)) };
      current = { vs, reals: new Map() };
      table.set(vsKey(vs), current);
      continue;
    }
    if (words[0] !== "->") {
      // FWM services and headers end the current virtual server.
      if (!line.startsWith(" ")) current = undefined;
      continue;
    }
    const at = parseAddress(words[1] ?? "");
    if (current === undefined || at === undefined) continue;
    const [weight, active, inactive] = [words[3], words[4], words[5]].map((w) => Number(w ?? 0));
    const rs: RealServer = { ...at, weight: weight ?? 0 };
    current.reals.set(hostPort(rs.address, rs.port), rs);
    if ((active ?? 0) > 0 || (inactive ?? 0) > 0) busy.add(realServerName(current.vs, rs));
  }
  return { table, busy };
}
