// The service table the way `cilium-dbg bpf lb list` prints it, from decoded map contents: one row group per
// frontend and scope ("10.96.0.10:53/UDP"; "/i" appended for the internal scope, which only a frontend whose
// scopes differ has, its external slot 0 flagged TWO_SCOPES), slot 0 first as
// "0.0.0.0:0 (revNat) (0) [flags]", then each slot's backend as "address:port/PROTO (revNat) (slot)". The
// `backends` and `revnat` views list those maps by id. Columns are padded as Go's tabwriter pads them
// (minimum width 5, padding 3); groups are sorted, where Cilium prints them in map order.

import { addressName, type MapContents, type ServiceEntry } from "./contents.js";
import { backendText, revNatText, sortedServiceEntries } from "./contents-text.js";
import { SCOPE_INTERNAL, serviceFlags } from "./layout.js";

export type LBListView = "services" | "backends" | "revnat";

/** Cilium's names for the kinds and properties a flag word shows; ours for the no-endpoint verdicts. */
function flagsText(flags: number): string {
  const kind =
    flags & serviceFlags.EXTERNAL_IP
      ? "ExternalIPs"
      : flags & serviceFlags.NODE_PORT
        ? "NodePort"
        : flags & serviceFlags.LOAD_BALANCER
          ? "LoadBalancer"
          : "ClusterIP";
  const words = [kind];
  if (flags & serviceFlags.EXTERNAL_LOCAL) words.push("Local");
  if (flags & serviceFlags.AFFINITY) words.push("sessionAffinity");
  if (flags & serviceFlags.SOURCE_RANGES) words.push("check source-range");
  if (flags & serviceFlags.REJECT) words.push("reject");
  if (flags & serviceFlags.DROP) words.push("drop");
  return words.join(", ");
}

function slotText(contents: MapContents, e: ServiceEntry): string {
  const v = e.value;
  if (e.key.backendSlot === 0) {
    const any = contents.family === "IPv6" ? "[::]" : "0.0.0.0";
    return `${any}:0 (${v.revNatIndex}) (0) [${flagsText(v.flags)}]`;
  }
  const b = contents.backends.get(v.backendId);
  if (!b) return `backend ${v.backendId} not found`;
  return `${addressName(b.address, b.port, b.proto)} (${v.revNatIndex}) (${e.key.backendSlot})`;
}

function serviceRows(all: readonly MapContents[]): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  for (const contents of all) {
    let group = "";
    for (const e of sortedServiceEntries(contents)) {
      const k = e.key;
      const name = `${addressName(k.address, k.dport, k.proto)}${k.scope === SCOPE_INTERNAL ? "/i" : ""}`;
      rows.push([name === group ? "" : name, slotText(contents, e)]);
      group = name;
    }
  }
  return rows;
}

/** The table for one view over the given families' contents (IPv4 first, as Cilium dumps them). */
export function formatLBList(all: readonly MapContents[], view: LBListView = "services"): string {
  const ordered = [...all].sort((a, b) => (a.family === b.family ? 0 : a.family === "IPv4" ? -1 : 1));
  if (view === "services")
    return table("SERVICE ADDRESS", "BACKEND ADDRESS (REVNAT_ID) (SLOT)", serviceRows(ordered));
  const rows: Array<[string, string]> = [];
  for (const c of ordered) {
    const byId =
      view === "backends"
        ? [...c.backends].map(([id, b]) => [id, backendText(b)] as const)
        : [...c.revNat].map(([index, r]) => [index, revNatText(r)] as const);
    for (const [id, text] of byId.sort(([a], [b]) => a - b)) rows.push([String(id), text]);
  }
  return table("ID", view === "backends" ? "BACKEND ADDRESS" : "REVERSE NAT", rows);
}

/** Two columns, each cell padded to its column's widest cell plus 3 (at least 5), trailing blanks trimmed. */
function table(first: string, second: string, rows: readonly (readonly [string, string])[]): string {
  const all = [[first, second] as const, ...rows];
  const width = Math.max(5, ...all.map(([a]) => a.length + 3));
  return all.map(([a, b]) => `${a.padEnd(width)}${b}`.trimEnd()).join("\n");
}
