import { cidrSize, fromInt, parseCidr, toInt } from "../netns/ipv4.js";

/** Pod addresses of one node: the CIDR's first address is the gateway (cbr0); pods take the lowest free one. */
export class Ipam {
  private readonly used = new Set<number>();
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
    // Skip the network address, the gateway, and the broadcast address.
    for (let i = 2; i < this.size - 1; i++) {
      if (!this.used.has(i)) {
        this.used.add(i);
        return fromInt(this.base + i);
      }
    }
    throw new Error(`no free pod address left in ${fromInt(this.base)}/${this.prefixLength}`);
  }

  release(ip: string): void {
    this.used.delete(toInt(ip) - this.base);
  }
}
