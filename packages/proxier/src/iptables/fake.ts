// An in-memory iptables for tests: applies iptables-restore input atomically, like the
// kernel commits a table, and refuses what the kernel refuses (jumps to missing chains,
// deleting a chain that is in use or not empty).
import type { IPTablesRestorer, RestoreOptions } from "../apply/iptables-restore.js";
import { BUILTIN_CHAINS, type IPTablesTable } from "./names.js";
import type { JumpRuleWriter } from "./skeleton.js";

/** Targets that are extensions, not chains. */
export const BUILTIN_TARGETS = new Set([
  "ACCEPT",
  "DROP",
  "REJECT",
  "RETURN",
  "MARK",
  "MASQUERADE",
  "DNAT",
  "SNAT",
  "LOG",
]);

export class IPTablesError extends Error {
  constructor(
    message: string,
    /** 1-based line of the restore input, when the error came from one. */
    readonly line?: number,
  ) {
    super(line === undefined ? message : `line ${line}: ${message}`);
    this.name = "IPTablesError";
  }
}

export interface FakeChain {
  readonly builtin: boolean;
  /** Rule arguments after "-A <chain>", as written. */
  rules: string[];
}

export type FakeTable = Map<string, FakeChain>;

/** Splits a rule into arguments; double quotes group words and are kept. */
export function tokenize(text: string): string[] {
  return text.match(/"[^"]*"|\S+/g) ?? [];
}

/** The chain a rule jumps or goes to, if any. */
export function ruleTarget(rule: string): string | undefined {
  const args = tokenize(rule);
  const i = args.findIndex((a) => a === "-j" || a === "-g");
  return i < 0 ? undefined : args[i + 1];
}

/** Arguments as one rule text, quoting those with spaces (iptables' own quoting). */
export function argsText(args: readonly string[]): string {
  return args.map((a) => (/\s/.test(a) && !a.startsWith('"') ? `"${a}"` : a)).join(" ");
}

function emptyTable(table: IPTablesTable): FakeTable {
  return new Map(BUILTIN_CHAINS[table].map((c) => [c, { builtin: true, rules: [] }]));
}

function copyTables(tables: ReadonlyMap<IPTablesTable, FakeTable>): Map<IPTablesTable, FakeTable> {
  return new Map(
    [...tables].map(([t, chains]) => [
      t,
      new Map([...chains].map(([n, c]) => [n, { builtin: c.builtin, rules: [...c.rules] }])),
    ]),
  );
}

function failAt(line: number, message: string): never {
  throw new IPTablesError(message, line);
}

function checkReferences(tableName: string, table: FakeTable, line?: number): void {
  for (const [name, chain] of table) {
    for (const rule of chain.rules) {
      const target = ruleTarget(rule);
      if (target !== undefined && !BUILTIN_TARGETS.has(target) && !table.has(target)) {
        throw new IPTablesError(`${tableName}: rule in ${name} jumps to missing chain ${target}`, line);
      }
    }
  }
}

export class FakeIPTables implements IPTablesRestorer, JumpRuleWriter {
  #tables = new Map<IPTablesTable, FakeTable>(
    (["filter", "nat", "mangle"] as const).map((t) => [t, emptyTable(t)]),
  );
  /** The last input given to restore(), applied or not. */
  lastRestore: string | undefined;

  /** Applies `text` as iptables-restore would: all of it, or nothing at all (--noflush by default). */
  restore(text: string, options: RestoreOptions = {}): void {
    const noflush = options.noflush ?? true;
    this.lastRestore = text;
    const tables = copyTables(this.#tables);
    let current: { name: IPTablesTable; table: FakeTable } | undefined;
    const lines = text.split("\n");
    for (const [index, raw] of lines.entries()) {
      const lineNo = index + 1;
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      const fail = (message: string): never => {
        throw new IPTablesError(message, lineNo);
      };
      if (line.startsWith("*")) {
        if (current) fail(`table ${current.name} not committed`);
        const name = line.slice(1) as IPTablesTable;
        if (!tables.has(name)) fail(`unknown table ${name}`);
        // Without --noflush a table is replaced wholesale.
        if (!noflush) tables.set(name, emptyTable(name));
        current = { name, table: tables.get(name) as FakeTable };
        continue;
      }
      if (!current) failAt(lineNo, "rule outside of a table");
      const { table } = current;
      if (line === "COMMIT") {
        checkReferences(current.name, table, lineNo);
        current = undefined;
        continue;
      }
      const chainDecl = /^:(\S+) (\S+) \[\d+:\d+\]$/.exec(line);
      if (chainDecl) {
        const [, name = "", policy] = chainDecl;
        const existing = table.get(name);
        if (existing?.builtin) {
          if (policy === "-") fail(`built-in chain ${name} needs a policy`);
          continue;
        }
        if (policy !== "-") fail(`user chain ${name} cannot have a policy`);
        // Declaring an existing chain flushes it.
        table.set(name, { builtin: false, rules: [] });
        continue;
      }
      const [op = "", chainName = "", ...rest] = tokenize(line);
      const chain = table.get(chainName);
      if (!chain) failAt(lineNo, `no chain ${chainName} in ${current.name}`);
      switch (op) {
        case "-A":
          chain.rules.push(rest.join(" "));
          continue;
        case "-I": {
          const at = /^\d+$/.test(rest[0] ?? "") ? Number(rest.shift()) - 1 : 0;
          chain.rules.splice(at, 0, rest.join(" "));
          continue;
        }
        case "-F":
          chain.rules = [];
          continue;
        case "-X":
          if (chain.builtin) fail(`cannot delete built-in chain ${chainName}`);
          if (chain.rules.length > 0) fail(`chain ${chainName} is not empty`);
          table.delete(chainName);
          continue;
        default:
          fail(`unsupported operation ${op}`);
      }
    }
    if (current) throw new IPTablesError(`table ${current.name} not committed`);
    this.#tables = tables;
  }

  /** Creates the chain unless it exists; returns whether it existed. */
  ensureChain(table: IPTablesTable, chain: string): boolean {
    const t = this.#table(table);
    if (t.has(chain)) return true;
    t.set(chain, { builtin: false, rules: [] });
    return false;
  }

  /** Adds the rule (first or last) unless an identical one exists; returns whether it existed. */
  ensureRule(
    position: "prepend" | "append",
    table: IPTablesTable,
    chain: string,
    args: readonly string[],
  ): boolean {
    const c = this.#table(table).get(chain);
    if (!c) throw new IPTablesError(`no chain ${chain} in ${table}`);
    const rule = argsText(args);
    if (c.rules.includes(rule)) return true;
    const target = ruleTarget(rule);
    if (target !== undefined && !BUILTIN_TARGETS.has(target) && !this.#table(table).has(target)) {
      throw new IPTablesError(`${table}: ${chain} would jump to missing chain ${target}`);
    }
    if (position === "prepend") c.rules.unshift(rule);
    else c.rules.push(rule);
    return false;
  }

  /** Rules of one chain, or undefined when it does not exist. */
  rules(table: IPTablesTable, chain: string): readonly string[] | undefined {
    return this.#table(table).get(chain)?.rules;
  }

  chains(table: IPTablesTable): string[] {
    return [...this.#table(table).keys()];
  }

  /** iptables-save style text: built-in chains first, then user chains sorted; rules in order. */
  dump(tables: readonly IPTablesTable[] = ["filter", "nat", "mangle"]): string {
    const out: string[] = [];
    for (const name of tables) {
      const table = this.#table(name);
      const order = [
        ...BUILTIN_CHAINS[name],
        ...[...table.keys()]
          .filter((c) => !table.get(c)?.builtin)
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
      ];
      out.push(`*${name}`);
      for (const chain of order) out.push(`:${chain} ${table.get(chain)?.builtin ? "ACCEPT" : "-"} [0:0]`);
      for (const chain of order)
        for (const rule of table.get(chain)?.rules ?? []) out.push(`-A ${chain} ${rule}`);
      out.push("COMMIT");
    }
    return `${out.join("\n")}\n`;
  }

  #table(name: IPTablesTable): FakeTable {
    const t = this.#tables.get(name);
    if (!t) throw new IPTablesError(`unknown table ${name}`);
    return t;
  }
}
