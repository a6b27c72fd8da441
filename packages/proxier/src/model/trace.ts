/** What the packet tracers of every mode take and give back, so their tables of cases read the same. */
export interface TracePacket {
  readonly sourceIP: string;
  readonly protocol?: "tcp" | "udp" | "sctp";
  readonly destIP: string;
  readonly destPort: number;
  /** The interface the packet came in on; only interface-based local detection reads it. */
  readonly inInterface?: string;
}

/** One rule a packet matched on its way, as the table holds it. */
export interface TraceStep {
  /** nftables: "ip kube-proxy"; iptables: "nat", "filter". */
  readonly table: string;
  readonly chain: string;
  /** The rule's text without its comment (nftables) or its arguments after `-A CHAIN` (iptables). */
  readonly rule: string;
  /** The rule's comment, when it has one. */
  readonly comment?: string;
  /** What the rule did beyond its text: the map element it found, the random branch it took. */
  readonly note?: string;
}

/** One way a packet can go through the rules. */
export interface TracePath {
  /** "ip:port" of the DNAT destination, or "DROP", "REJECT", "ACCEPT" (not DNATed). */
  readonly output: string;
  readonly masq: boolean;
  /** The chance of this path among all of them: the product of the random choices on it (1 without any). */
  readonly probability: number;
  readonly steps: readonly TraceStep[];
}

export interface TraceResult {
  /** "ip:port, ip:port" of DNAT destinations, or "DROP", "REJECT", or "ACCEPT" (not DNATed). */
  readonly output: string;
  /** Whether any path through the rules masqueraded the packet. */
  readonly masq: boolean;
  /** Rule fragments the tracer did not understand; must be empty for a trustworthy result. */
  readonly errors: readonly string[];
  /** Every path, in the order the rules offer them; their probabilities add up to 1. */
  readonly paths: readonly TracePath[];
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
  /** The product of the random choices taken so far. */
  probability: number;
  /** The rules matched so far; replaced, never changed in place, so copies of a packet can share it. */
  steps: readonly TraceStep[];
}

/** The packet a tracer starts with. */
export function startPacket(packet: TracePacket): TracedPacket {
  return {
    src: packet.sourceIP,
    proto: packet.protocol ?? "tcp",
    dst: packet.destIP,
    dport: packet.destPort,
    iif: packet.inInterface ?? "",
    mark: 0,
    masq: false,
    probability: 1,
    steps: [],
  };
}

/** A path's output as the result reports it. */
function outputOf(verdict: string | undefined, pkt: TracedPacket): string {
  if (verdict === "drop") return "DROP";
  if (verdict === "reject") return "REJECT";
  return pkt.dnat ?? "ACCEPT";
}

/** The result of a trace from the final state of every branch. */
export function traceResult(
  outcomes: readonly { pkt: TracedPacket; verdict?: string }[],
  errors: readonly string[],
): TraceResult {
  const paths = outcomes.map((o) => ({
    output: outputOf(o.verdict, o.pkt),
    masq: o.pkt.masq,
    probability: o.pkt.probability,
    steps: o.pkt.steps,
  }));
  const outputs = [...new Set(paths.map((p) => p.output))];
  return { output: outputs.join(", "), masq: paths.some((p) => p.masq), errors, paths };
}
