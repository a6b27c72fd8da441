// The jump rules and canary chains as one iptables-restore input, decided against what
// iptables-save shows. kube-proxy ensures them with an `iptables -N`, `-C` and `-I` per rule:
// about 45 processes, most of a first sync's time for a small cluster. Reading the tables once
// and sending only what is missing ends in the same tables.

import type { IPTablesTable } from "./names.js";
import { ensureCanaryChains, ensureJumpChains, type JumpRuleWriter } from "./skeleton.js";

export type SavedTables = Readonly<Record<IPTablesTable, string>>;

/** iptables-save prints an argument with spaces in double quotes; so do we, to compare. */
function quote(arg: string): string {
  return /\s/.test(arg) ? `"${arg}"` : arg;
}

/** The restore input that creates the missing chains and jump rules; "" when nothing is missing. */
export function skeletonRestore(saved: SavedTables): string {
  const tables = new Map<IPTablesTable, { chains: Set<string>; rules: Set<string>; out: string[] }>();
  const table = (name: IPTablesTable) => {
    let t = tables.get(name);
    if (!t) {
      const lines = saved[name].split("\n");
      t = {
        chains: new Set(lines.filter((l) => l.startsWith(":")).map((l) => l.slice(1).split(" ")[0] ?? "")),
        rules: new Set(lines.filter((l) => l.startsWith("-A "))),
        out: [],
      };
      tables.set(name, t);
    }
    return t;
  };
  const writer: JumpRuleWriter = {
    ensureChain(name, chain) {
      const t = table(name);
      if (t.chains.has(chain)) return;
      t.chains.add(chain);
      t.out.push(`:${chain} - [0:0]`);
    },
    ensureRule(position, name, chain, args) {
      const t = table(name);
      const spec = args.map(quote).join(" ");
      if (t.rules.has(`-A ${chain} ${spec}`)) return;
      t.rules.add(`-A ${chain} ${spec}`);
      // Prepending in list order, like kube-proxy's `iptables -I`: the last one ends up first.
      t.out.push(`${position === "prepend" ? "-I" : "-A"} ${chain} ${spec}`);
    },
  };
  ensureJumpChains(writer);
  ensureCanaryChains(writer);
  let restore = "";
  for (const [name, t] of tables) if (t.out.length > 0) restore += `*${name}\n${t.out.join("\n")}\nCOMMIT\n`;
  return restore;
}
