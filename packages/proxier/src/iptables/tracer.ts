// Walks one packet through a FakeIPTables, reporting where it ends up. It understands only
// the rule fragments our renderer writes; anything else is reported as an error rather than
// guessed at, so a renderer change that the tracer cannot follow fails loudly.

import type { TracedPacket, TracePacket, TraceResult } from "../model/trace.js";
import { cidrContainsText, parseIP } from "../util/ip.js";
import { type FakeIPTables, tokenize } from "./fake.js";
import type { IPTablesTable } from "./names.js";

export type { TracePacket, TraceResult } from "../model/trace.js";

type Pkt = TracedPacket;

type Verdict = "accept" | "drop" | "reject";
interface Outcome {
  pkt: Pkt;
  /** Undefined: fell off the end of the chain (or, from a target, go on with the next rule). */
  verdict?: Verdict | "return";
}

const MAX_DEPTH = 32;
const copy = (pkt: Pkt): Pkt => ({ ...pkt });

class Tracer {
  readonly errors: string[] = [];
  constructor(
    private readonly ipt: FakeIPTables,
    private readonly localIPs: readonly string[],
  ) {}

  #isLocal(ip: string): boolean {
    return this.localIPs.includes(ip) || cidrContainsText("127.0.0.0/8", ip) || ip === "::1";
  }

  #addr(spec: string, ip: string): boolean {
    return spec.includes("/") ? cidrContainsText(spec, ip) : parseIP(spec) !== null && spec === ip;
  }

  /**
   * The branches of `pkt` that match the rule's conditions (a random match splits the
   * packet in two), paired with the remaining target arguments; [] when nothing matches.
   */
  #match(args: string[], pkt: Pkt): { pkt: Pkt; target: string[] }[] {
    let branches = [pkt];
    let i = 0;
    let negate = false;
    const take = () => args[i++] ?? "";
    while (i < args.length) {
      const a = take();
      if (a === "-j" || a === "-g") return branches.map((p) => ({ pkt: p, target: args.slice(i - 1) }));
      if (a === "!") {
        negate = true;
        continue;
      }
      const test = (ok: boolean) => ok !== negate;
      switch (a) {
        case "-m": {
          const module = take();
          if (module === "comment" || ["tcp", "udp", "sctp"].includes(module)) break;
          if (!["addrtype", "statistic", "recent", "mark", "conntrack", "nfacct"].includes(module)) {
            this.errors.push(`unknown match module ${module}`);
          }
          break;
        }
        case "--comment":
        case "--nfacct-name":
        case "--mode":
        case "--name":
        case "--seconds":
          take();
          break;
        case "--reap":
          break;
        case "--set":
          break;
        case "--rcheck":
          // The tracer has no connection history, so no client is "recent".
          branches = [];
          break;
        case "-p": {
          const proto = take();
          branches = branches.filter((p) => test(p.proto === proto));
          break;
        }
        case "-s":
        case "-d": {
          const spec = take();
          branches = branches.filter((p) => test(this.#addr(spec, a === "-s" ? p.src : p.dst)));
          break;
        }
        case "-i": {
          // an interface name, or a prefix when it ends in "+" (interface-based local detection)
          const name = take();
          const hit = (iif: string) =>
            name.endsWith("+") ? iif.startsWith(name.slice(0, -1)) : iif === name;
          branches = branches.filter((p) => test(hit(p.iif ?? "")));
          break;
        }
        case "--dport": {
          const port = Number(take());
          branches = branches.filter((p) => test(p.dport === port));
          break;
        }
        case "--src-type":
        case "--dst-type":
          if (take() !== "LOCAL") this.errors.push(`unknown address type in ${args.join(" ")}`);
          branches = branches.filter((p) => test(this.#isLocal(a === "--src-type" ? p.src : p.dst)));
          break;
        case "--probability":
          take();
          // Either outcome is possible: keep the packet on both paths.
          break;
        case "--mark": {
          const [value = "0", mask = "0xffffffff"] = take().split("/");
          const v = Number.parseInt(value, 16);
          const m = Number.parseInt(mask, 16);
          branches = branches.filter((p) => test((p.mark & m) === v));
          break;
        }
        case "--ctstate": {
          const states = take().split(",");
          branches = branches.filter((p) =>
            test(states.includes("NEW") || (p.dnat !== undefined && states.includes("DNAT"))),
          );
          break;
        }
        default:
          this.errors.push(`unknown argument ${a} in ${args.join(" ")}`);
          return [];
      }
      negate = false;
    }
    return branches.map((p) => ({ pkt: p, target: [] }));
  }

  runChain(table: IPTablesTable, name: string, pkt: Pkt, depth = 0): Outcome[] {
    const rules = this.ipt.rules(table, name);
    if (!rules || depth > MAX_DEPTH) {
      this.errors.push(rules ? `rule loop through ${name}` : `no chain ${table}/${name}`);
      return [{ pkt, verdict: "drop" }];
    }
    return this.#from(table, rules, 0, pkt, depth);
  }

  #from(table: IPTablesTable, rules: readonly string[], start: number, pkt: Pkt, depth: number): Outcome[] {
    for (let i = start; i < rules.length; i++) {
      const args = tokenize(rules[i] ?? "");
      const matched = this.#match(args, pkt);
      const probabilistic = args.includes("--probability");
      const out: Outcome[] = [];
      for (const m of matched) {
        for (const r of this.#target(table, m.target, copy(m.pkt), depth)) {
          if (r.verdict === undefined) out.push(...this.#from(table, rules, i + 1, r.pkt, depth));
          else out.push(r.verdict === "return" ? { pkt: r.pkt } : r);
        }
      }
      // A random match may also miss, sending the packet on to the next rule.
      if (probabilistic) out.push(...this.#from(table, rules, i + 1, copy(pkt), depth));
      if (matched.length > 0 || probabilistic) return out;
    }
    return [{ pkt }];
  }

  /** Outcomes of a target; verdict undefined means "go on with the next rule". */
  #target(table: IPTablesTable, target: string[], pkt: Pkt, depth: number): Outcome[] {
    const [, name = "", ...rest] = target;
    switch (name) {
      case "":
        return [{ pkt }];
      case "ACCEPT":
        return [{ pkt, verdict: "accept" }];
      case "DROP":
        return [{ pkt, verdict: "drop" }];
      case "REJECT":
        return [{ pkt, verdict: "reject" }];
      case "MARK": {
        const bits = Number.parseInt(rest[1] ?? "0", 16);
        if (rest[0] === "--or-mark") pkt.mark |= bits;
        else if (rest[0] === "--xor-mark") pkt.mark ^= bits;
        else this.errors.push(`unknown MARK arguments ${rest.join(" ")}`);
        return [{ pkt }];
      }
      case "MASQUERADE":
        pkt.masq = true;
        return [{ pkt, verdict: "accept" }];
      case "DNAT": {
        const to = rest[1] ?? "";
        const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(to);
        pkt.dnat = to;
        pkt.dst = m?.[1] ?? pkt.dst;
        pkt.dport = Number(m?.[2] ?? pkt.dport);
        return [{ pkt, verdict: "accept" }];
      }
      case "RETURN":
        return [{ pkt, verdict: "return" }];
      default:
        if (target[0] !== "-j") this.errors.push(`unsupported ${target.join(" ")}`);
        // A user chain: what falls off its end (or returns) continues after the jump.
        return this.runChain(table, name, pkt, depth + 1);
    }
  }

  /** Runs a built-in chain; every built-in policy is ACCEPT. */
  hook(table: IPTablesTable, chain: string, pkts: Outcome[]): Outcome[] {
    return pkts.flatMap((o) =>
      o.verdict === "drop" || o.verdict === "reject"
        ? [o]
        : this.runChain(table, chain, o.pkt).map((r) => (r.verdict === "accept" ? { pkt: r.pkt } : r)),
    );
  }
}

/** Traces a new connection; `nodeIPs` are the node's local addresses. */
export function tracePacket(ipt: FakeIPTables, nodeIPs: readonly string[], packet: TracePacket): TraceResult {
  const tracer = new Tracer(ipt, nodeIPs);
  const pkt: Pkt = {
    src: packet.sourceIP,
    proto: packet.protocol ?? "tcp",
    dst: packet.destIP,
    dport: packet.destPort,
    iif: packet.inInterface ?? "",
    mark: 0,
    masq: false,
  };
  let outcomes: Outcome[];
  if (nodeIPs.includes(packet.sourceIP)) {
    outcomes = tracer.hook(
      "nat",
      "POSTROUTING",
      tracer.hook("filter", "OUTPUT", tracer.hook("nat", "OUTPUT", [{ pkt }])),
    );
  } else {
    const routed = tracer.hook("nat", "PREROUTING", [{ pkt }]);
    const toHost = (o: Outcome) => nodeIPs.includes(o.pkt.dst);
    outcomes = [
      ...tracer.hook("filter", "INPUT", routed.filter(toHost)),
      ...tracer.hook(
        "nat",
        "POSTROUTING",
        tracer.hook(
          "filter",
          "FORWARD",
          routed.filter((o) => !toHost(o)),
        ),
      ),
    ];
  }
  const outputs: string[] = [];
  for (const o of outcomes) {
    const text = o.verdict === "drop" ? "DROP" : o.verdict === "reject" ? "REJECT" : (o.pkt.dnat ?? "ACCEPT");
    if (!outputs.includes(text)) outputs.push(text);
  }
  return { output: outputs.join(", "), masq: outcomes.some((o) => o.pkt.masq), errors: tracer.errors };
}
