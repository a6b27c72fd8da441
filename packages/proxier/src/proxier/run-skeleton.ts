// The renderers declare their fixed iptables skeleton through a synchronous JumpRuleWriter
// (the fake implements it directly); this runs such writers against the async applier, in order.
import type { IPTablesTableName, IptablesRestoreApplier } from "../apply/iptables-restore.js";
import type { JumpRuleWriter } from "../iptables/skeleton.js";

export async function runSkeleton(
  ipt: IptablesRestoreApplier,
  ...writers: readonly ((w: JumpRuleWriter) => void)[]
): Promise<void> {
  const steps: (() => Promise<void>)[] = [];
  const writer: JumpRuleWriter = {
    ensureChain: (table, chain) => steps.push(() => ipt.ensureChain(table as IPTablesTableName, chain)),
    ensureRule: (position, table, chain, args) =>
      steps.push(() => ipt.ensureRule(position, table as IPTablesTableName, chain, args)),
  };
  for (const write of writers) write(writer);
  for (const step of steps) await step();
}
