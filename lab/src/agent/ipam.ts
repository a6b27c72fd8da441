import { type CidrRange, cidrRange, cidrSize, familyOf, fromBig, toBig } from "@switchyard/basics";

/**
 * Pod addresses of one node in one family: the CIDR's first address is the gateway (cbr0); pods take the next free
 * one after the last handed out, wrapping around, as the CNI host-local IPAM does. Handing a freed address straight
 * to the next pod would meet the old pod's MAC still in its neighbours' ARP caches (for half a minute), and their
 * answers to the new pod would go nowhere. A dual-stack node has one of these per family.
 */
export class Ipam {
  private readonly used = new Set<bigint>();
  /** The offset handed out last; the search starts after it. */
  private last = 1n;
  private readonly cidr: CidrRange;
  /** Offsets 2 to the last but one: not the network address, the gateway, or IPv4's broadcast address. */
  private readonly usable: bigint;
  readonly gateway: string;
  readonly prefixLength: number;

  constructor(podCidr: string) {
    this.cidr = cidrRange(podCidr);
    // An IPv6 /64 has more offsets than anyone will walk; the search below only ever looks a few ahead.
    this.usable = cidrSize(this.cidr) - 3n;
    this.prefixLength = this.cidr.bits;
    this.gateway = fromBig(this.cidr.family, this.cidr.base + 1n);
  }

  get family(): CidrRange["family"] {
    return this.cidr.family;
  }

  allocate(): string {
    for (let step = 1n; step <= this.usable; step++) {
      const i = 2n + ((this.last - 2n + step) % this.usable);
      if (!this.used.has(i)) {
        this.used.add(i);
        this.last = i;
        return fromBig(this.cidr.family, this.cidr.base + i);
      }
    }
    throw new Error(
      `no free pod address left in ${fromBig(this.cidr.family, this.cidr.base)}/${this.prefixLength}`,
    );
  }

  /** Marks an address a pod already holds (one a previous agent handed out) as taken; one outside the CIDR is ignored. */
  reserve(ip: string): void {
    if (familyOf(ip) !== this.cidr.family) return;
    const offset = toBig(ip) - this.cidr.base;
    if (offset >= 2n && offset < 2n + this.usable) this.used.add(offset);
  }

  release(ip: string): void {
    this.used.delete(toBig(ip) - this.cidr.base);
  }
}
