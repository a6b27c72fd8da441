// Jumps from the built-in chains into IPVS mode's chains, as data. They differ from iptables
// mode's (other chains, other comments, no conntrack matches), so they get their own table.
import type { JumpChain, JumpRuleWriter } from "../iptables/skeleton.js";
import { jumpRuleArgs } from "../iptables/skeleton.js";
import * as N from "./names.js";

const jump = (table: JumpChain["table"], from: string, to: string, comment: string): JumpChain => ({
  table,
  from,
  to,
  comment,
  extraArgs: [],
});

/** Ensured in this order by prepending, so the last one ends up first in its built-in chain. */
export const IPVS_JUMP_CHAINS: readonly JumpChain[] = [
  jump("nat", "OUTPUT", N.KUBE_SERVICES, "kubernetes service portals"),
  jump("nat", "PREROUTING", N.KUBE_SERVICES, "kubernetes service portals"),
  jump("nat", "POSTROUTING", N.KUBE_POSTROUTING, "kubernetes postrouting rules"),
  jump("filter", "FORWARD", N.KUBE_FORWARD, "kubernetes forwarding rules"),
  jump("filter", "INPUT", N.KUBE_NODE_PORT, "kubernetes health check rules"),
  jump("filter", "INPUT", N.KUBE_PROXY_FIREWALL, "kube-proxy firewall rules"),
  jump("filter", "FORWARD", N.KUBE_PROXY_FIREWALL, "kube-proxy firewall rules"),
  jump("filter", "INPUT", N.KUBE_IPVS_FILTER, "kubernetes ipvs access filter"),
  jump("filter", "OUTPUT", N.KUBE_IPVS_OUT_FILTER, "kubernetes ipvs access filter"),
];

/** Creates IPVS mode's chains and the jumps into them; kube-proxy does this on every sync. */
export function ensureIPVSJumpChains(ipt: JumpRuleWriter): void {
  for (const chain of N.NAT_CHAINS) ipt.ensureChain("nat", chain);
  for (const chain of N.FILTER_CHAINS) ipt.ensureChain("filter", chain);
  for (const j of IPVS_JUMP_CHAINS) ipt.ensureRule("prepend", j.table, j.from, jumpRuleArgs(j));
}
