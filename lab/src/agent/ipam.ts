import { cidrSize, fromInt, parseCidr, toInt } from "../netns/ipv4.js";

/**
 * Pod addresses of one node: the CIDR's first address is the gateway (cbr0); pods take the next free one after
 * the last handed out, wrapping around, as the CNI host-local IPAM does. Handing a freed address straight to the
 * next pod would meet the old pod's MAC still in its neighbours' ARP caches (for half a minute), and their
 * answers to the new pod would go nowhere.
 */
export class Ipam {
  private readonly used = new Set<number>();
  /** The offset handed out last; the search starts after it. */
  private last = 1;
  private readonly base: number;
  private readonly size: number;
  readonly gateway: string;
  readonly prefixLength: number;

  constructor(podCidr: string) {
    const c = parseCidr(podCidr);
    this.base = c.base;
    this.size = cidrSize(c);
    this.prefixLength = c.bits;
    this.gateway = fromInt(c.base + 1);
  }

  allocate(): string {
    // Offsets 2 to size-2: not the network address, the gateway, or the broadcast address.
    const usable = this.size - 3;
    for (let step = 1; step <= usable; step++) {
      const i = 2 + ((this.last - 2 + step) % usable);
      if (!this.used.has(i)) {
        this.used.add(i);
        this.last = i;
        return fromInt(this.base + i);
      }
    }
    throw new Error(`no free pod address left in ${fromInt(this.base)}/${this.prefixLength}`);
  }

  release(ip: string): void {
    this.used.delete(toInt(ip) - this.base);
  }
}
