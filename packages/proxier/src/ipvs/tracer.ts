// Walks one packet through IPVS mode: nat PREROUTING/OUTPUT (masquerade marks), filter
// INPUT (source ranges, the VIP port filter), the IPVS table (which real servers may get
// it), filter OUTPUT for node traffic and nat POSTROUTING (hairpin and marked SNAT). It reads
// only the rule fragments the IPVS renderer writes; anything else is an error, not a guess.

import { cidrContainsText, normalizeIP } from "@switchyard/basics";
import { type FakeIPTables, tokenize } from "../iptables/fake.js";
import type { IPTablesTable } from "../iptables/names.js";
import type { FakeIPVS } from "./fake.js";
import { findVirtualServer } from "./fake.js";
import type { FakeIPSet } from "./fake-ipset.js";
import { hostPort } from "./virtual-server.js";

export interface IPVSTracePacket {
  readonly sourceIP: string;
  readonly protocol?: "tcp" | "udp" | "sctp";
  readonly destIP: string;
  readonly destPort: number;
  /** Sent by a process on the node (nat OUTPUT) rather than arriving (nat PREROUTING). */
  readonly fromNode?: boolean;
  /** Arrived over a bridge port (a local pod on a bridge CNI). */
  readonly bridged?: boolean;
}

export interface IPVSTraceResult {
  /** "ip:port, …" of possible real servers; "DROP", "REJECT", "LOCAL" (host socket) or "FORWARD". */
  readonly output: string;
  readonly masq: boolean;
  readonly errors: readonly string[];
}

export interface IPVSKernel {
  readonly iptables: FakeIPTables;
  readonly ipset: FakeIPSet;
  readonly ipvs: FakeIPVS;
  /** Addresses that are local: node addresses plus those on kube-ipvs0. */
  readonly localIPs: readonly string[];
}

interface Pkt {
  src: string;
  dst: string;
  proto: "tcp" | "udp" | "sctp";
  dport: number;
  mark: number;
  masq: boolean;
  /** Set once IPVS picked this packet: the virtual service it hit. */
  vs?: { addr: string; proto: string; port: number };
}

type Verdict = "accept" | "drop" | "reject" | "return" | undefined;

class Walker {
  readonly errors: string[] = [];
  constructor(
    private readonly k: IPVSKernel,
    private readonly bridged: boolean,
  ) {}

  isLocal(ip: string): boolean {
    return this.k.localIPs.includes(ip) || cidrContainsText("127.0.0.0/8", ip) || ip === "::1";
  }

  chain(table: IPTablesTable, name: string, pkt: Pkt, depth = 0): Verdict {
    if (depth > 16) {
      this.errors.push(`jump loop at ${name}`);
      return "drop";
    }
    for (const rule of this.k.iptables.rules(table, name) ?? []) {
      const target = this.match(tokenize(rule), pkt);
      if (!target) continue;
      const [verb = "", ...rest] = target;
      if (verb === "ACCEPT" || verb === "DROP" || verb === "REJECT" || verb === "RETURN") {
        return verb.toLowerCase() as Verdict;
      }
      if (verb === "MASQUERADE") {
        pkt.masq = true;
        return "accept";
      }
      if (verb === "MARK") {
        const value = Number(rest[1]);
        pkt.mark = rest[0] === "--or-mark" ? pkt.mark | value : pkt.mark ^ value;
        continue;
      }
      const verdict = this.chain(table, verb, pkt, depth + 1);
      if (verdict !== "return" && verdict !== undefined) return verdict;
    }
    return undefined;
  }

  /** The target arguments when every condition holds, else null. */
  match(args: string[], pkt: Pkt): string[] | null {
    let ok = true;
    let negate = false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i] ?? "";
      const next = () => args[++i] ?? "";
      const test = (cond: boolean) => {
        if (cond === negate) ok = false;
        negate = false;
      };
      if (a === "-j") return ok ? args.slice(i + 1) : null;
      if (a === "!") negate = true;
      else if (a === "-s") test(addrMatch(next(), pkt.src));
      else if (a === "-d") test(addrMatch(next(), pkt.dst));
      else if (a === "-p") test(next() === pkt.proto);
      else if (
        a === "-m" &&
        ["comment", "set", "addrtype", "physdev", "mark", "conntrack", "ipvs"].includes(next())
      ) {
        // the module's options follow and are handled below
      } else if (a === "--comment") next();
      else if (a === "--match-set") {
        const name = next();
        test(this.#inSet(name, next(), pkt));
      } else if (a === "--src-type") test(next() === "LOCAL" && this.isLocal(pkt.src));
      else if (a === "--dst-type") test(next() === "LOCAL" && this.isLocal(pkt.dst));
      else if (a === "--physdev-is-in") test(this.bridged);
      else if (a === "--mark") {
        const [value = 0, mask = 0] = next().split("/").map(Number);
        test((pkt.mark & mask) === value);
      } else if (a === "--ctstate") test(next().split(",").includes("NEW"));
      else if (a === "--vaddr") test(pkt.vs?.addr === next());
      else if (a === "--vproto") test(pkt.vs?.proto === next());
      else if (a === "--vport") test(pkt.vs?.port === Number(next()));
      else {
        this.errors.push(`unknown rule fragment ${a}`);
        return null;
      }
    }
    return null;
  }

  #inSet(name: string, flags: string, pkt: Pkt): boolean {
    try {
      return this.k.ipset.matches(name, flags, pkt);
    } catch (e) {
      this.errors.push(String(e));
      return false;
    }
  }
}

function addrMatch(spec: string, ip: string): boolean {
  return spec.includes("/") ? cidrContainsText(spec, ip) : normalizeIP(spec) === ip;
}

export function traceIPVSPacket(k: IPVSKernel, packet: IPVSTracePacket): IPVSTraceResult {
  const w = new Walker(k, packet.bridged ?? false);
  const pkt: Pkt = {
    src: normalizeIP(packet.sourceIP) ?? packet.sourceIP,
    dst: normalizeIP(packet.destIP) ?? packet.destIP,
    proto: packet.protocol ?? "tcp",
    dport: packet.destPort,
    mark: 0,
    masq: false,
  };
  const done = (output: string, masq = false): IPVSTraceResult => ({ output, masq, errors: w.errors });
  const nat = w.chain("nat", packet.fromNode ? "OUTPUT" : "PREROUTING", pkt);
  if (nat === "drop" || nat === "reject") return done(nat.toUpperCase());
  if (!w.isLocal(pkt.dst)) return done("FORWARD");
  // IPVS hooks LOCAL_IN after the filter table, but LOCAL_OUT before it.
  if (!packet.fromNode) {
    const input = w.chain("filter", "INPUT", pkt);
    if (input === "drop" || input === "reject") return done(input.toUpperCase());
  }
  const entry = findVirtualServer(k.ipvs.table(), pkt.proto.toUpperCase() as "TCP", pkt.dst, pkt.dport);
  if (!entry) return done("LOCAL");
  pkt.vs = { addr: pkt.dst, proto: pkt.proto, port: pkt.dport };
  if (packet.fromNode) {
    const output = w.chain("filter", "OUTPUT", pkt);
    if (output === "drop" || output === "reject") return done(output.toUpperCase());
  }
  // Schedulers never pick a weight-0 server; with none left IPVS answers ICMP unreachable.
  const reals = [...entry.reals.values()].filter((rs) => rs.weight > 0);
  if (reals.length === 0) return done("REJECT");
  let masq = false;
  for (const rs of reals) {
    const out: Pkt = { ...pkt, dst: rs.address, dport: rs.port, masq: false };
    w.chain("nat", "POSTROUTING", out);
    masq ||= out.masq;
  }
  const output = reals.map((rs) => hostPort(rs.address, rs.port)).sort();
  return done(output.join(", "), masq);
}
