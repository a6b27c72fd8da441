// An in-memory ipset: applies `ipset restore` programs atomically and answers the
// `-m set --match-set NAME flags` question for a packet, for the tracer.

import { cidrContainsText } from "@switchyard/basics";
import type { IPSetRestorer } from "../apply/ipvs-applier.js";
import type { IPSetType } from "./names.js";

export class IPSetError extends Error {
  constructor(message: string, line: number) {
    super(`line ${line}: ${message}`);
    this.name = "IPSetError";
  }
}

interface FakeSet {
  readonly type: IPSetType;
  readonly members: Set<string>;
}

const TYPES = new Set<string>([
  "hash:ip",
  "hash:ip,port",
  "hash:ip,port,ip",
  "hash:ip,port,net",
  "bitmap:port",
]);

export interface SetPacket {
  readonly src: string;
  readonly dst: string;
  readonly proto: "tcp" | "udp" | "sctp";
  readonly dport: number;
}

export class FakeIPSet implements IPSetRestorer {
  #sets = new Map<string, FakeSet>();

  /** Applies an `ipset restore` program: all of it, or nothing at all. */
  restore(text: string): void {
    const sets = new Map([...this.#sets].map(([n, s]) => [n, { type: s.type, members: new Set(s.members) }]));
    for (const [index, raw] of text.split("\n").entries()) {
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      const fail = (message: string): never => {
        throw new IPSetError(message, index + 1);
      };
      const [op, name = "", arg = "", ...rest] = line.split(/\s+/);
      const set = sets.get(name);
      switch (op) {
        case "create":
          if (!TYPES.has(arg)) fail(`unsupported type ${arg}`);
          if (set && (set.type !== arg || !rest.includes("-exist"))) fail(`set ${name} exists`);
          if (!set) sets.set(name, { type: arg as IPSetType, members: new Set() });
          break;
        case "flush":
          (set ?? fail(`no set ${name}`)).members.clear();
          break;
        case "add":
          if (!set) fail(`no set ${name}`);
          else if (set.members.has(arg) && !rest.includes("-exist")) fail(`${arg} already in ${name}`);
          else set.members.add(arg);
          break;
        case "del":
          if (!set?.members.delete(arg)) fail(`${arg} not in ${name}`);
          break;
        default:
          fail(`unsupported command ${op}`);
      }
    }
    this.#sets = sets;
  }

  /** restore() under IPVSApplier's name, so the fake stands in for the applier's ipset half. */
  restoreIPSets(program: string): void {
    this.restore(program);
  }

  members(name: string): readonly string[] | undefined {
    const set = this.#sets.get(name);
    return set ? [...set.members].sort() : undefined;
  }

  /** Whether the packet matches `--match-set name flags`; throws for a missing set. */
  matches(name: string, flags: string, pkt: SetPacket): boolean {
    const set = this.#sets.get(name);
    if (!set) throw new Error(`no ipset ${name}`);
    const pick = flags.split(",").map((dir, i) => {
      if (i === 1) return `${pkt.proto}:${pkt.dport}`;
      return dir === "src" ? pkt.src : pkt.dst;
    });
    switch (set.type) {
      case "bitmap:port":
        return set.members.has(String(pkt.dport));
      case "hash:ip":
        return set.members.has(pick[0] ?? "");
      case "hash:ip,port":
      case "hash:ip,port,ip":
        return set.members.has(pick.join(","));
      case "hash:ip,port,net": {
        const prefix = `${pick[0]},${pick[1]},`;
        return [...set.members].some(
          (m) => m.startsWith(prefix) && cidrContainsText(m.slice(prefix.length), pick[2] ?? ""),
        );
      }
    }
  }

  /** `ipset list` reduced to what is stable: name, type and sorted members per set. */
  list(): string {
    const out: string[] = [];
    for (const name of [...this.#sets.keys()].sort()) {
      const set = this.#sets.get(name);
      if (set) out.push(`Name: ${name}`, `Type: ${set.type}`, "Members:", ...[...set.members].sort(), "");
    }
    return out.join("\n");
  }
}

/** Reduces real `ipset list` output to FakeIPSet.list()'s form. */
export function canonicalIPSetList(text: string): string {
  const out: string[] = [];
  for (const block of text.split(/\n(?=Name: )/)) {
    const name = /^Name: (.*)$/m.exec(block)?.[1];
    const type = /^Type: (.*)$/m.exec(block)?.[1];
    if (!name || !type) continue;
    const members = (block.split(/^Members:\n/m)[1] ?? "").split("\n").filter((l) => l.trim() !== "");
    out.push(`Name: ${name}`, `Type: ${type}`, "Members:", ...members.sort(), "");
  }
  const blocks = out.join("\n").split(/\n(?=Name: )/);
  return blocks.sort().join("\n").replace(/\n*$/, "\n");
}
