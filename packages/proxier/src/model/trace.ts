/** What the packet tracers of every mode take and give back, so their tables of cases read the same. */
export interface TracePacket {
  readonly sourceIP: string;
  readonly protocol?: "tcp" | "udp" | "sctp";
  readonly destIP: string;
  readonly destPort: number;
  /** The interface the packet came in on; only interface-based local detection reads it. */
  readonly inInterface?: string;
}

export interface TraceResult {
  /** "ip:port, ip:port" of DNAT destinations, or "DROP", "REJECT", or "ACCEPT" (not DNATed). */
  readonly output: string;
  /** Whether any path through the rules masqueraded the packet. */
  readonly masq: boolean;
  /** Rule fragments the tracer did not understand; must be empty for a trustworthy result. */
  readonly errors: readonly string[];
}

/** The packet as a tracer carries it through chains: addresses, mark, and what has been done to it. */
export interface TracedPacket {
  src: string;
  proto: string;
  dst: string;
  dport: number;
  /** Input interface, "" when unknown or locally generated. */
  iif?: string;
  mark: number;
  dnat?: string;
  masq: boolean;
}
