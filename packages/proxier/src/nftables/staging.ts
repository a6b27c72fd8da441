// A big full sync as a few small transactions ahead of the one that switches traffic. Binding an
// anonymous set to its rule makes the kernel walk the whole batch so far (__nft_set_trans_bind
// visits every entry of the transaction's commit list), so one batch of N Service chains, each with
// its `numgen ... map { ... }`, costs O(N^2): at 10k Services about 40% of the kernel's time
// (perf, 2026-12-03). A chain no rule, map element or verdict names yet is unreachable, so chains
// that do not exist in the kernel can be filled in earlier transactions of their own; the last
// transaction, which adds the map elements that make them reachable, is as atomic as before, and
// the table ends up the same.

import type { Operation } from "./objects.js";
import { Transaction } from "./transaction.js";

export interface StagedTransaction {
  /** Transactions that only create unreachable chains and their rules, to commit first. */
  readonly stages: readonly Transaction[];
  /** The rest of the original, in its order. */
  readonly main: Transaction;
}

export interface StagingOptions {
  /** Chains the kernel's table holds now (those are never staged: something may jump to them). */
  readonly kernelChains: ReadonlySet<string>;
  /** Stage only when at least this many chains qualify. */
  readonly minChains: number;
  /** Chains per staging transaction. */
  readonly chainsPerStage: number;
}

/**
 * A rule that names no chain, named set or stateful object (`counter name x`) can go into a chain
 * before anything else of the transaction exists.
 */
function selfContained(rule: string): boolean {
  return !rule.includes("@") && !/\b(?:jump|goto|name)\b/.test(rule);
}

/** Regular chains this transaction creates and fills with self-contained rules, nothing else. */
export function stageableChains(tx: Transaction, kernelChains: ReadonlySet<string>): string[] {
  const created: string[] = [];
  const disqualified = new Set<string>(kernelChains);
  for (const { verb, object: o } of tx.operations) {
    if (o.kind === "table" && verb !== "add") return [];
    if (o.kind === "chain") {
      if (verb === "add" && o.hook === undefined) created.push(o.name);
      else if (verb !== "flush") disqualified.add(o.name);
    } else if (o.kind === "rule" && (verb !== "add" || !selfContained(o.rule))) {
      disqualified.add(o.chain);
    }
  }
  const seen = new Set<string>();
  return created.filter((c) => !disqualified.has(c) && !seen.has(c) && seen.add(c));
}

/** The transaction split as above, or null when too few chains qualify (or there is no `add table`). */
export function stageChains(tx: Transaction, o: StagingOptions): StagedTransaction | null {
  if (tx.error) return null;
  const table = tx.operations.find((op) => op.object.kind === "table" && op.verb === "add");
  if (!table) return null;
  const chains = stageableChains(tx, o.kernelChains);
  if (chains.length < o.minChains) return null;
  const stageOf = new Map(chains.map((c, i) => [c, Math.floor(i / o.chainsPerStage)]));
  const stageOps: Operation[][] = Array.from({ length: Math.ceil(chains.length / o.chainsPerStage) }, () => [
    table,
  ]);
  const main = new Transaction(tx.family, tx.table);
  for (const op of tx.operations) {
    const chain =
      op.object.kind === "chain" ? op.object.name : op.object.kind === "rule" ? op.object.chain : "";
    const stage = stageOf.get(chain);
    if (stage === undefined) push(main, op);
    // A chain created a moment ago is empty: its flush has nothing to do.
    else if (op.verb !== "flush") stageOps[stage]?.push(op);
  }
  const stages = stageOps.map((ops) => {
    const t = new Transaction(tx.family, tx.table);
    for (const op of ops) push(t, op);
    return t;
  });
  return { stages, main };
}

function push(tx: Transaction, { verb, object }: Operation): void {
  tx[verb](object);
}
