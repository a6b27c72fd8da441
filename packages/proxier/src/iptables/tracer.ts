// Walks one packet through a FakeIPTables, reporting where it ends up. It understands only
// the rule fragments our renderer writes; anything else is reported as an error rather than
// guessed at, so a renderer change that the tracer cannot follow fails loudly.

import { cidrContainsText, parseIP } from "@switchyard/basics";
import {
  startPacket,
  type TracedPacket,
  type TracePacket,
  type TraceResult,
  type TraceStep,
  traceResult,
} from "../model/trace.js";
import { type FakeIPTables, tokenize } from "./fake.js";
import type { IPTablesTable } from "./names.js";

export type { TracePacket, TracePath, TraceResult, TraceStep } from "../model/trace.js";

type Pkt = TracedPacket;

type Verdict = "accept" | "drop" | "reject";
interface Outcome {
  pkt: Pkt;
  /** Undefined: fell off the end of the chain (or, from a target, go on with the next rule). */
  verdict?: Verdict | "return";
}

const MAX_DEPTH = 32;

/** A matched rule as a step: its arguments, with the comment taken out into its own field. */
function step(table: IPTablesTable, chain: string, rule: string): TraceStep {
  const m = /(?:^| )-m comment --comment ("[^"]*"|\S+)/.exec(rule);
  if (!m) return { table, chain, rule };
  const text = `${rule.slice(0, m.index)}${rule.slice(m.index + m[0].length)}`.trim();
  return { table, chain, rule: text, comment: (m[1] ?? "").replace(/^"|"$/g, "") };
}

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
   * Splits `pkt` by the rule's conditions: the branches that match it, each with the remaining target
   * arguments, and those that do not and go on with the next rule. A random match splits a branch in two,
   * weighted by its probability; any other condition sends the whole branch one way.
   */
  #match(args: string[], pkt: Pkt): { hits: { pkt: Pkt; target: string[] }[]; misses: Pkt[] } {
    let branches = [pkt];
    const misses: Pkt[] = [];
    let i = 0;
    let negate = false;
    const take = () => args[i++] ?? "";
    const keep = (ok: (p: Pkt) => boolean) => {
      const test = (p: Pkt) => ok(p) !== negate;
      misses.push(...branches.filter((p) => !test(p)));
      branches = branches.filter(test);
    };
    while (i < args.length) {
      const a = take();
      if (a === "-j" || a === "-g")
        return { hits: branches.map((p) => ({ pkt: p, target: args.slice(i - 1) })), misses };
      if (a === "!") {
        negate = true;
        continue;
      }
      if (!this.#condition(a, take, keep, args)) {
        if (a === "--probability") {
          const chance = Number(take());
          misses.push(...branches.map((p) => ({ ...p, probability: p.probability * (1 - chance) })));
          branches = branches.map((p) => ({ ...p, probability: p.probability * chance }));
        } else if (a === "--rcheck") {
          // The tracer has no connection history, so no client is "recent".
          keep(() => false);
        } else {
          this.errors.push(`unknown argument ${a} in ${args.join(" ")}`);
          return { hits: [], misses: [...misses, ...branches] };
        }
      }
      negate = false;
    }
    return { hits: branches.map((p) => ({ pkt: p, target: [] })), misses };
  }

  /** Evaluates one deterministic condition `a` (taking its value); false when `a` is not one. */
  #condition(
    a: string,
    take: () => string,
    keep: (ok: (p: Pkt) => boolean) => void,
    args: readonly string[],
  ): boolean {
    switch (a) {
      case "-m": {
        const module = take();
        if (module === "comment" || ["tcp", "udp", "sctp"].includes(module)) return true;
        if (!["addrtype", "statistic", "recent", "mark", "conntrack", "nfacct"].includes(module)) {
          this.errors.push(`unknown match module ${module}`);
        }
        return true;
      }
      case "--comment":
      case "--nfacct-name":
      case "--mode":
      case "--name":
      case "--seconds":
      case "--mask":
        take();
        return true;
      // recent's flags; iptables-save adds --mask 255.255.255.255 --rsource, its defaults
      case "--reap":
      case "--set":
      case "--rsource":
        return true;
      case "-p": {
        const proto = take();
        keep((p) => p.proto === proto);
        return true;
      }
      case "-s":
      case "-d": {
        const spec = take();
        keep((p) => this.#addr(spec, a === "-s" ? p.src : p.dst));
        return true;
      }
      case "-i": {
        // an interface name, or a prefix when it ends in "+" (interface-based local detection)
        const name = take();
        const hit = (iif: string) => (name.endsWith("+") ? iif.startsWith(name.slice(0, -1)) : iif === name);
        keep((p) => hit(p.iif ?? ""));
        return true;
      }
      case "--dport": {
        const port = Number(take());
        keep((p) => p.dport === port);
        return true;
      }
      case "--src-type":
      case "--dst-type": {
        const type = take();
        if (type !== "LOCAL") this.errors.push(`unknown address type ${type} in ${args.join(" ")}`);
        keep((p) => this.#isLocal(a === "--src-type" ? p.src : p.dst));
        return true;
      }
      case "--mark": {
        const [value = "0", mask = "0xffffffff"] = take().split("/");
        const v = Number.parseInt(value, 16);
        const m = Number.parseInt(mask, 16);
        keep((p) => (p.mark & m) === v);
        return true;
      }
      case "--ctstate": {
        const states = take().split(",");
        keep((p) => states.includes("NEW") || (p.dnat !== undefined && states.includes("DNAT")));
        return true;
      }
      default:
        return false;
    }
  }

  runChain(table: IPTablesTable, name: string, pkt: Pkt, depth = 0): Outcome[] {
    const rules = this.ipt.rules(table, name);
    if (!rules || depth > MAX_DEPTH) {
      this.errors.push(rules ? `rule loop through ${name}` : `no chain ${table}/${name}`);
      return [{ pkt, verdict: "drop" }];
    }
    return this.#from(table, name, rules, 0, pkt, depth);
  }

  #from(
    table: IPTablesTable,
    chain: string,
    rules: readonly string[],
    start: number,
    pkt: Pkt,
    depth: number,
  ): Outcome[] {
    for (let i = start; i < rules.length; i++) {
      const rule = rules[i] ?? "";
      const args = tokenize(rule);
      const { hits, misses } = this.#match(args, pkt);
      // The common case, a rule that does not match: go on without recursing.
      if (hits.length === 0 && misses.length === 1 && misses[0] === pkt) continue;
      const out: Outcome[] = [];
      for (const hit of hits) {
        const branch = { ...hit.pkt, steps: [...hit.pkt.steps, step(table, chain, rule)] };
        for (const r of this.#target(table, hit.target, branch, depth)) {
          if (r.verdict === undefined) out.push(...this.#from(table, chain, rules, i + 1, r.pkt, depth));
          else out.push(r.verdict === "return" ? { pkt: r.pkt } : r);
        }
      }
      for (const miss of misses) out.push(...this.#from(table, chain, rules, i + 1, miss, depth));
      return out;
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
      case "MARK":
        this.#mark(pkt, rest);
        return [{ pkt }];
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

  /**
   * The MARK target as the renderer writes it (--or-mark, --xor-mark) and as iptables-save prints it back
   * (--set-xmark value/mask: clear the mask's bits, then xor the value; --set-mark: clear, then or).
   */
  #mark(pkt: Pkt, args: readonly string[]): void {
    const [value = "0", mask] = (args[1] ?? "").split("/");
    const bits = Number.parseInt(value, 16);
    const cleared = mask === undefined ? pkt.mark : pkt.mark & ~Number.parseInt(mask, 16);
    if (args[0] === "--or-mark") pkt.mark |= bits;
    else if (args[0] === "--xor-mark") pkt.mark ^= bits;
    else if (args[0] === "--set-xmark") pkt.mark = cleared ^ bits;
    else if (args[0] === "--set-mark") pkt.mark = cleared | bits;
    else this.errors.push(`unknown MARK arguments ${args.join(" ")}`);
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
  const pkt = startPacket(packet);
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
  return traceResult(outcomes, tracer.errors);
}
