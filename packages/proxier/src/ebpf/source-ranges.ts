// loadBalancerSourceRanges in the eBPF maps: one LPM trie entry per (reverse NAT index, range) of a load-balancer
// frontend whose slot 0 carries SOURCE_RANGES. The programs let a source in only if a longest-prefix lookup of
// (index, source) finds an entry, as kube-proxy's firewall chain drops a source outside the ranges.
//
// Held by reverse NAT index, each range as its canonical CIDR text. A sync diffs what a changed frontend wants
// against what its index holds: new ranges are written in delta.ts's step before the service entries (so a
// SOURCE_RANGES flag never meets an index without its ranges) and old ones deleted after them (once the flag
// or the frontend is gone).

import { cidrContains, formatCIDR, type IPFamily, parseCIDR, parseIP } from "@switchyard/basics";
import type { ServicePortInfo } from "../model/service-port.js";
import { sourceRangesContain } from "../model/service-port.js";
import { decodeStruct } from "./codec.js";
import type { StepPlan } from "./delta.js";
import { SOURCE_RANGE_KEY_BITS, sourceRangeKey } from "./layout.js";

/**
 * The sources a port's load-balancer frontends admit: its ranges (already of this family and canonical) and,
 * when one of them holds the node's address, the VIPs too: a VIP the node also has as a local address is the
 * source of the node's own requests to it (kube-proxy's allowFromNode).
 */
export function admittedSources(sp: ServicePortInfo, nodeIP: string | undefined): readonly string[] {
  const ranges = sp.loadBalancerSourceRanges;
  if (nodeIP === undefined || !sourceRangesContain(sp, nodeIP)) return ranges;
  return [...ranges, ...sp.loadBalancerVIPs.map((vip) => rangeOfAddress(vip))];
}

function rangeOfAddress(ip: string): string {
  return ip.includes(":") ? `${ip}/128` : `${ip}/32`;
}

/** Whether `source` lies in one of `ranges` (what the LPM lookup answers: any match admits). */
export function sourceAdmitted(ranges: readonly string[] | undefined, source: string): boolean {
  const ip = parseIP(source);
  if (!ip) return false;
  return (ranges ?? []).some((text) => {
    const cidr = parseCIDR(text);
    return cidr !== null && cidrContains(cidr, ip);
  });
}

/** A key of the source range map, decoded: the frontend's index and the range as CIDR text. */
export function decodeSourceRangeKey(
  family: IPFamily,
  key: Uint8Array,
): { revNatIndex: number; range: string } {
  const k = decodeStruct(sourceRangeKey, family, key);
  return { revNatIndex: k.revNatIndex, range: `${k.address}/${k.prefixLen - SOURCE_RANGE_KEY_BITS}` };
}

interface HeldRanges {
  readonly ranges: Set<string>;
  /** Written by a frontend of this run; false for entries found live at start-up and not yet claimed. */
  owned: boolean;
}

export class SourceRanges {
  readonly #held = new Map<number, HeldRanges>();
  #size = 0;

  /** The live keys of a first sync: held as found, for the frontends to keep and the sweep to delete. */
  static fromExisting(family: IPFamily, keys: readonly Buffer[]): SourceRanges {
    const held = new SourceRanges();
    for (const key of keys) {
      const { revNatIndex, range } = decodeSourceRangeKey(family, key);
      held.#rangesOf(revNatIndex, false).add(range);
      held.#size++;
    }
    return held;
  }

  get size(): number {
    return this.#size;
  }

  /**
   * One frontend's ranges made `want`: the frontend held index `from` (undefined: none) and now has index `to`
   * (undefined: it is gone). Ranges under an index it left are deleted.
   */
  write(plan: StepPlan, from: number | undefined, to: number | undefined, want: readonly string[]): void {
    if (from !== undefined && from !== to) this.#replace(plan, from, []);
    if (to !== undefined) this.#replace(plan, to, want);
  }

  /** Deletes the ranges found live at start-up that no frontend claimed. */
  sweep(plan: StepPlan): void {
    for (const [index, held] of [...this.#held]) if (!held.owned) this.#replace(plan, index, []);
  }

  /** Reverse NAT index → its ranges, sorted. */
  contents(): Map<number, readonly string[]> {
    const out = new Map<number, readonly string[]>();
    for (const [index, held] of this.#held) out.set(index, [...held.ranges].sort());
    return out;
  }

  #replace(plan: StepPlan, index: number, want: readonly string[]): void {
    const held = this.#held.get(index);
    const wanted = new Set(want.map(canonical));
    for (const range of wanted) {
      if (held?.ranges.has(range)) continue;
      plan.updateSourceRange(index, range);
      this.#rangesOf(index, true).add(range);
      this.#size++;
    }
    for (const range of held?.ranges ?? []) {
      if (wanted.has(range)) continue;
      plan.deleteSourceRange(index, range);
      held?.ranges.delete(range);
      this.#size--;
    }
    if (wanted.size === 0) this.#held.delete(index);
    else this.#rangesOf(index, true);
  }

  #rangesOf(index: number, owned: boolean): Set<string> {
    let held = this.#held.get(index);
    if (!held) {
      held = { ranges: new Set(), owned };
      this.#held.set(index, held);
    }
    if (owned) held.owned = true;
    return held.ranges;
  }
}

/** The range as the map holds it: the network address (bits past the prefix cleared) and the prefix. */
function canonical(text: string): string {
  const cidr = parseCIDR(text);
  if (!cidr) throw new Error(`loadBalancerSourceRange ${text} is not a CIDR`);
  return formatCIDR(cidr);
}
