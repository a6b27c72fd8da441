// Walks one packet through a FakeNFTables table, reporting where it ends up. It understands
// only the rule fragments our renderer writes; anything else is reported as an error rather
// than guessed at, so a renderer change that the tracer cannot follow fails loudly.

import { cidrContainsText, parseIP } from "@switchyard/basics";
import {
  startPacket,
  type TracedPacket,
  type TracePacket,
  type TraceResult,
  traceResult,
} from "../model/trace.js";
import type { FakeNFTables, FakeTable } from "./fake.js";

export type { TracePacket, TracePath, TraceResult, TraceStep } from "../model/trace.js";

type Pkt = TracedPacket;

type Verdict = "accept" | "drop" | "reject";
/** A chain's result for one branch of the packet: a verdict or falling off the end (undefined). */
interface Outcome {
  pkt: Pkt;
  verdict?: Verdict;
}

const MAX_DEPTH = 32;

class Tracer {
  readonly errors: string[] = [];
  constructor(
    private readonly table: FakeTable,
    private readonly tableName: string,
    private readonly nodeIPs: readonly string[],
  ) {}

  /** Records on the packet that it matched `rule` of `chain`. */
  #step(pkt: Pkt, chain: string, rule: { rule: string; comment?: string }): void {
    const step = { table: this.tableName, chain, rule: rule.rule };
    pkt.steps = [...pkt.steps, rule.comment === undefined ? step : { ...step, comment: rule.comment }];
  }

  /** Adds what the last matched rule did (the element it found, the branch it took). */
  #note(pkt: Pkt, note: string): void {
    const last = pkt.steps.at(-1);
    if (last) pkt.steps = [...pkt.steps.slice(0, -1), { ...last, note }];
  }

  #addrMatches(spec: string, ip: string): boolean {
    const list = spec.startsWith("{") ? spec.slice(1, -1).split(",") : [spec];
    return list.some((raw) => {
      const item = raw.trim();
      if (item.includes("/")) return cidrContainsText(item, ip);
      return parseIP(item) !== null && item === ip;
    });
  }

  #inSet(name: string, value: string): boolean {
    const set = this.table.sets.get(name);
    if (!set) {
      this.errors.push(`no set ${name}`);
      return false;
    }
    return [...set.elements.values()].some((e) =>
      (e.key[0] ?? "").includes("/") ? cidrContainsText(e.key[0] ?? "", value) : e.key[0] === value,
    );
  }

  /** Membership of a concatenated key (exact match of every part) in a set. */
  #inConcatSet(name: string, key: readonly string[]): boolean {
    const set = this.table.sets.get(name);
    if (!set) {
      this.errors.push(`no set ${name}`);
      return false;
    }
    return set.elements.has(key.join(" . "));
  }

  /** The value of `key` in a map, noted on the packet's last step either way. */
  #lookup(map: string, key: string[], pkt: Pkt): string | undefined {
    const m = this.table.maps.get(map);
    if (!m) {
      this.errors.push(`no map ${map}`);
      return undefined;
    }
    const element = m.elements.get(key.join(" . "));
    const value = element?.value?.join(" ");
    const comment = element?.comment === undefined ? "" : ` (${element.comment})`;
    this.#note(
      pkt,
      value === undefined
        ? `@${map}: no element ${key.join(" . ")}`
        : `@${map}: ${key.join(" . ")}${comment} : ${value}`,
    );
    return value;
  }

  /** Consumes the match fragments at the start of `rest`; returns the statement left, or null if a match failed. */
  #matches(rule: string, pkt: Pkt): string | null {
    let rest = rule;
    for (;;) {
      const next = this.#matchOne(rest, pkt);
      if (next === null) return null;
      if (next === rest) return rest;
      rest = next;
    }
  }

  /** Evaluates the first match fragment of `rest`: the remainder, null on mismatch, `rest` if none. */
  #matchOne(rest: string, pkt: Pkt): string | null {
    const ct = /^ct state new /.exec(rest);
    if (ct) return rest.slice(ct[0].length);
    const set = /^ip6? (saddr|daddr) (!= )?@(\S+) /.exec(rest);
    if (set) {
      const hit = this.#inSet(set[3] ?? "", set[1] === "saddr" ? pkt.src : pkt.dst);
      return hit === (set[2] !== undefined) ? null : rest.slice(set[0].length);
    }
    const addr = /^ip6? (saddr|daddr) (!= )?(\{ [^}]* \}|[0-9a-fA-F][0-9a-fA-F.:/]*) /.exec(rest);
    if (addr) {
      const hit = this.#addrMatches(addr[3] ?? "", addr[1] === "saddr" ? pkt.src : pkt.dst);
      return hit === (addr[2] !== undefined) ? null : rest.slice(addr[0].length);
    }
    // interface names as local detection writes them: exact, or a prefix ending in "*"
    const iif = /^iifname (!= )?"?([^"\s]+)"? /.exec(rest);
    if (iif) {
      const name = iif[2] ?? "";
      const want = pkt.iif ?? "";
      const hit = name.endsWith("*") ? want.startsWith(name.slice(0, -1)) : want === name;
      return hit === (iif[1] !== undefined) ? null : rest.slice(iif[0].length);
    }
    const fib = /^fib (saddr|daddr) type local /.exec(rest);
    if (fib)
      return this.nodeIPs.includes(fib[1] === "saddr" ? pkt.src : pkt.dst) ? rest.slice(fib[0].length) : null;
    const mark = /^mark and (0x[0-9a-f]+) (==|!=) 0 /.exec(rest);
    if (mark) {
      const set = (pkt.mark & Number.parseInt(mark[1] ?? "0", 16)) !== 0;
      return set === (mark[2] === "!=") ? rest.slice(mark[0].length) : null;
    }
    const dnatted = /^ct status dnat /.exec(rest);
    if (dnatted) return pkt.dnat === undefined ? null : rest.slice(dnatted[0].length);
    const tuple = /^ip6? saddr \. ip6? daddr \. meta l4proto \. th dport @(\S+) /.exec(rest);
    if (tuple) {
      const key = [pkt.src, pkt.dst, pkt.proto, String(pkt.dport)];
      return this.#inConcatSet(tuple[1] ?? "", key) ? rest.slice(tuple[0].length) : null;
    }
    return rest;
  }

  /** Applies a verdict-map value or a statement's verdict ("goto X", "drop", ...). */
  #verdict(text: string, pkt: Pkt, depth: number): Outcome[] | "continue" {
    let m: RegExpExecArray | null = null;
    m = /^(jump|goto) (\S+)$/.exec(text);
    if (m) {
      const results = this.runChain(m[2] ?? "", pkt, depth + 1);
      // A jump that falls off the callee continues here; a goto ends this chain too.
      if (m[1] === "jump")
        return results.every((r) => r.verdict === undefined) && results.length === 1 ? "continue" : results;
      return results;
    }
    if (text === "drop" || text === "reject" || text === "accept") return [{ pkt, verdict: text }];
    if (text === "return") return [{ pkt }];
    this.errors.push(`unknown verdict: ${text}`);
    return [{ pkt, verdict: "drop" }];
  }

  #statement(stmt: string, pkt: Pkt, depth: number): Outcome[] | "continue" {
    let m: RegExpExecArray | null = null;
    m = /^ip6? daddr \. meta l4proto \. th dport vmap @(\S+)$/.exec(stmt);
    if (m) {
      const v = this.#lookup(m[1] ?? "", [pkt.dst, pkt.proto, String(pkt.dport)], pkt);
      return v === undefined ? "continue" : this.#verdict(v, pkt, depth);
    }
    m = /^meta l4proto \. th dport vmap @(\S+)$/.exec(stmt);
    if (m) {
      const v = this.#lookup(m[1] ?? "", [pkt.proto, String(pkt.dport)], pkt);
      return v === undefined ? "continue" : this.#verdict(v, pkt, depth);
    }
    m = /^numgen random mod (\d+) vmap \{ (.*) \}$/.exec(stmt);
    if (m) {
      const branches = (m[2] ?? "").split(" , ").map((b) => /^\d+ : (.*)$/.exec(b)?.[1] ?? "");
      if (branches.length !== Number(m[1]))
        this.errors.push(`numgen modulus does not match its map: ${stmt}`);
      return branches.flatMap((b, i) => {
        const branch = this.#branch(pkt, branches.length, `numgen ${i} of ${branches.length}: ${b}`);
        const r = this.#verdict(b, branch, depth);
        return r === "continue" ? [{ pkt: branch }] : r;
      });
    }
    // Setting the mark may be followed by another statement in the same rule.
    m = /^mark set mark (or|xor) (0x[0-9a-f]+)(?: (.*))?$/.exec(stmt);
    if (m) {
      const bits = Number.parseInt(m[2] ?? "0", 16);
      pkt.mark = m[1] === "or" ? pkt.mark | bits : pkt.mark ^ bits;
      return m[3] === undefined ? "continue" : this.#statement(m[3], pkt, depth);
    }
    if (/^masquerade( fully-random)?$/.test(stmt)) {
      pkt.masq = true;
      return [{ pkt, verdict: "accept" }];
    }
    m = /^meta l4proto (\w+) dnat to (\S+)$/.exec(stmt);
    if (m) {
      if (m[1] !== pkt.proto) return "continue";
      const target = /^\[?([^\]]*?)\]?:(\d+)$/.exec(m[2] ?? "");
      return [this.#dnat(pkt, target?.[1] ?? pkt.dst, Number(target?.[2] ?? pkt.dport))];
    }
    // Every entry of the numgen map is a possible outcome of the random choice.
    m = /^meta l4proto (\w+) dnat ip6? addr \. port to numgen random mod (\d+) map \{ (.*) \}$/.exec(stmt);
    if (m) {
      if (m[1] !== pkt.proto) return "continue";
      const entries = (m[3] ?? "").split(" , ").map((e) => /^(\d+) : (\S+) \. (\d+)$/.exec(e));
      const indexes = entries.map((e) => Number(e?.[1] ?? -1));
      if (entries.some((e) => e === null) || indexes.some((index, i) => index !== i))
        this.errors.push(`malformed numgen map: ${stmt}`);
      if (entries.length !== Number(m[2])) this.errors.push(`numgen modulus does not match its map: ${stmt}`);
      return entries.map((e, i) => {
        const branch = this.#branch(
          pkt,
          entries.length,
          `numgen ${i} of ${entries.length}: ${e?.[2]} . ${e?.[3]}`,
        );
        return this.#dnat(branch, e?.[2] ?? "", Number(e?.[3] ?? 0));
      });
    }
    if (/^update @\S+ \{ ip6? saddr \}$/.test(stmt)) return "continue";
    return this.#verdict(stmt, pkt, depth);
  }

  /** A copy of the packet for one of `n` equally likely random choices. */
  #branch(pkt: Pkt, n: number, note: string): Pkt {
    const copy = { ...pkt, probability: pkt.probability / n };
    this.#note(copy, note);
    return copy;
  }

  #dnat(pkt: Pkt, ip: string, port: number): Outcome {
    pkt.dnat = ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
    pkt.dst = ip;
    pkt.dport = port;
    return { pkt, verdict: "accept" };
  }

  /** Runs a chain's rules from `from` on; branches that fall off a jumped-to chain continue with the next rule. */
  runChain(name: string, pkt: Pkt, depth = 0, from = 0): Outcome[] {
    const chain = this.table.chains.get(name);
    if (!chain || depth > MAX_DEPTH) {
      this.errors.push(chain ? `rule loop through ${name}` : `no chain ${name}`);
      return [{ pkt, verdict: "drop" }];
    }
    for (let i = from; i < chain.rules.length; i++) {
      const rule = chain.rules[i] ?? { rule: "" };
      const stmt = this.#matches(rule.rule, pkt);
      if (stmt === null) continue;
      this.#step(pkt, name, rule);
      const result = this.#statement(stmt, pkt, depth);
      if (result === "continue") continue;
      return result.flatMap((r) =>
        r.verdict === undefined && /^jump /.test(stmt) ? this.runChain(name, r.pkt, depth, i + 1) : [r],
      );
    }
    return [{ pkt }];
  }

  /** Runs the base chains of `hook` in priority order; the policy of every base chain is accept. */
  runHook(hook: string, pkts: Outcome[]): Outcome[] {
    const bases = [...this.table.chains.values()]
      .filter((c) => c.def.hook === hook)
      .sort((a, b) => (a.def.priority ?? 0) - (b.def.priority ?? 0));
    let current = pkts;
    for (const base of bases) {
      current = current.flatMap((o) =>
        o.verdict === "drop" || o.verdict === "reject"
          ? [o]
          : this.runChain(base.def.name, o.pkt).map((r) => (r.verdict === "accept" ? { pkt: r.pkt } : r)),
      );
    }
    return current;
  }
}

export function tracePacket(nft: FakeNFTables, nodeIPs: readonly string[], packet: TracePacket): TraceResult {
  const table = nft.state;
  if (!table) return { output: "ACCEPT", masq: false, errors: ["no table"], paths: [] };
  const tracer = new Tracer(table, `${nft.family} ${nft.table}`, nodeIPs);
  const pkt = startPacket(packet);
  let outcomes: Outcome[];
  if (nodeIPs.includes(packet.sourceIP)) {
    outcomes = tracer.runHook("postrouting", tracer.runHook("output", [{ pkt }]));
  } else {
    const routed = tracer.runHook("prerouting", [{ pkt }]);
    const input = routed.filter((o) => nodeIPs.includes(o.pkt.dst));
    const forward = routed.filter((o) => !nodeIPs.includes(o.pkt.dst));
    outcomes = [
      ...tracer.runHook("input", input),
      ...tracer.runHook("postrouting", tracer.runHook("forward", forward)),
    ];
  }
  return traceResult(outcomes, tracer.errors);
}
