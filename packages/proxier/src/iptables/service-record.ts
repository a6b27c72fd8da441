// What one Service port wrote in the last sync that every sync must write again: its filter
// rules and its KUBE-SERVICES/KUBE-NODEPORTS rules, plus the chains it keeps. A partial sync
// replays this for unchanged Services instead of rebuilding them, so its cost follows the
// change; the lines themselves still go out, because iptables-restore rewrites those chains.
import type { LineBuffer } from "./line-buffer.js";
import type { ServicePortOutcome } from "./service-port-context.js";

export interface ServicePortRecord extends ServicePortOutcome {
  readonly filterLines: readonly string[];
  readonly topNatLines: readonly string[];
  readonly chains: readonly string[];
}

export interface ReplayContext {
  readonly filterRules: LineBuffer;
  readonly topNatRules: LineBuffer;
}

export function replayServicePort(ctx: ReplayContext, record: ServicePortRecord): void {
  ctx.filterRules.append(record.filterLines);
  ctx.topNatRules.append(record.topNatLines);
}
