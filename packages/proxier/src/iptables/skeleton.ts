// The fixed part of kube-proxy's iptables rules: jumps from the built-in chains into ours
// (declared as data, ensured on full syncs), the canary chains and the per-sync fixed rules.
import {
  type IPTablesTable,
  KUBE_EXTERNAL_SERVICES_CHAIN,
  KUBE_FORWARD_CHAIN,
  KUBE_MARK_MASQ_CHAIN,
  KUBE_NODEPORTS_CHAIN,
  KUBE_POSTROUTING_CHAIN,
  KUBE_PROXY_CANARY_CHAIN,
  KUBE_PROXY_FIREWALL_CHAIN,
  KUBE_SERVICES_CHAIN,
  KUBELET_FIREWALL_CHAIN,
} from "./names.js";

export interface JumpChain {
  readonly table: IPTablesTable;
  /** Our chain. */
  readonly to: string;
  /** The built-in chain that jumps to it. */
  readonly from: string;
  readonly comment: string;
  readonly extraArgs: readonly string[];
}

const ctNew = ["-m", "conntrack", "--ctstate", "NEW"] as const;

/**
 * Jump rules, ensured in this order by prepending, so the last one ends up first in its
 * built-in chain. They are not part of the restore input: that would replace every rule in
 * the built-in chains, which other components own too.
 */
export const JUMP_CHAINS: readonly JumpChain[] = [
  {
    table: "filter",
    to: KUBE_EXTERNAL_SERVICES_CHAIN,
    from: "INPUT",
    comment: "kubernetes externally-visible service portals",
    extraArgs: ctNew,
  },
  {
    table: "filter",
    to: KUBE_EXTERNAL_SERVICES_CHAIN,
    from: "FORWARD",
    comment: "kubernetes externally-visible service portals",
    extraArgs: ctNew,
  },
  {
    table: "filter",
    to: KUBE_NODEPORTS_CHAIN,
    from: "INPUT",
    comment: "kubernetes health check service ports",
    extraArgs: [],
  },
  {
    table: "filter",
    to: KUBE_SERVICES_CHAIN,
    from: "FORWARD",
    comment: "kubernetes service portals",
    extraArgs: ctNew,
  },
  {
    table: "filter",
    to: KUBE_SERVICES_CHAIN,
    from: "OUTPUT",
    comment: "kubernetes service portals",
    extraArgs: ctNew,
  },
  {
    table: "filter",
    to: KUBE_FORWARD_CHAIN,
    from: "FORWARD",
    comment: "kubernetes forwarding rules",
    extraArgs: [],
  },
  {
    table: "filter",
    to: KUBE_PROXY_FIREWALL_CHAIN,
    from: "INPUT",
    comment: "kubernetes load balancer firewall",
    extraArgs: ctNew,
  },
  {
    table: "filter",
    to: KUBE_PROXY_FIREWALL_CHAIN,
    from: "OUTPUT",
    comment: "kubernetes load balancer firewall",
    extraArgs: ctNew,
  },
  {
    table: "filter",
    to: KUBE_PROXY_FIREWALL_CHAIN,
    from: "FORWARD",
    comment: "kubernetes load balancer firewall",
    extraArgs: ctNew,
  },
  {
    table: "nat",
    to: KUBE_SERVICES_CHAIN,
    from: "OUTPUT",
    comment: "kubernetes service portals",
    extraArgs: [],
  },
  {
    table: "nat",
    to: KUBE_SERVICES_CHAIN,
    from: "PREROUTING",
    comment: "kubernetes service portals",
    extraArgs: [],
  },
  {
    table: "nat",
    to: KUBE_POSTROUTING_CHAIN,
    from: "POSTROUTING",
    comment: "kubernetes postrouting rules",
    extraArgs: [],
  },
];

/** kubelet creates these too; kube-proxy ensures them but never removes them. */
export const KUBELET_JUMP_CHAINS: readonly JumpChain[] = [
  { table: "filter", to: KUBELET_FIREWALL_CHAIN, from: "INPUT", comment: "", extraArgs: [] },
  { table: "filter", to: KUBELET_FIREWALL_CHAIN, from: "OUTPUT", comment: "", extraArgs: [] },
];

/** Tables that get an empty canary chain (created once, then watched). */
export const CANARY_TABLES: readonly IPTablesTable[] = ["mangle", "nat", "filter"];
export { KUBE_PROXY_CANARY_CHAIN };

/** The arguments of a jump rule after "-I <from>", as kube-proxy passes them to iptables. */
export function jumpRuleArgs(jump: JumpChain): string[] {
  const comment = jump.comment === "" ? [] : ["-m", "comment", "--comment", jump.comment];
  return [...jump.extraArgs, ...comment, "-j", jump.to];
}

/** Chains declared (created, or flushed under --noflush) at the top of every sync. */
export const FILTER_TOP_CHAINS = [
  KUBE_SERVICES_CHAIN,
  KUBE_EXTERNAL_SERVICES_CHAIN,
  KUBE_FORWARD_CHAIN,
  KUBE_NODEPORTS_CHAIN,
  KUBE_PROXY_FIREWALL_CHAIN,
] as const;
export const NAT_TOP_CHAINS = [
  KUBE_SERVICES_CHAIN,
  KUBE_NODEPORTS_CHAIN,
  KUBE_POSTROUTING_CHAIN,
  KUBE_MARK_MASQ_CHAIN,
] as const;

/** What ensuring the jump rules needs: `iptables -N` and `iptables -C || iptables -I/-A`. */
export interface JumpRuleWriter {
  ensureChain(table: IPTablesTable, chain: string): unknown;
  ensureRule(
    position: "prepend" | "append",
    table: IPTablesTable,
    chain: string,
    args: readonly string[],
  ): unknown;
}

/**
 * Ensures our chains exist and the built-in chains jump to them; kube-proxy does this before
 * the restore of every full sync (a flushed table is noticed through the canary chain).
 */
export function ensureJumpChains(ipt: JumpRuleWriter): void {
  for (const jump of [...JUMP_CHAINS, ...KUBELET_JUMP_CHAINS]) {
    ipt.ensureChain(jump.table, jump.to);
    ipt.ensureRule("prepend", jump.table, jump.from, jumpRuleArgs(jump));
  }
}

/** Creates the canary chains that reveal a flush of the tables. */
export function ensureCanaryChains(ipt: Pick<JumpRuleWriter, "ensureChain">): void {
  for (const table of CANARY_TABLES) ipt.ensureChain(table, KUBE_PROXY_CANARY_CHAIN);
}
