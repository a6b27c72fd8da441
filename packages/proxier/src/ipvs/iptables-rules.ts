// The iptables half of IPVS mode. IPVS balances but cannot masquerade or filter, so a fixed
// set of rules does that by matching kube-proxy's ipsets; only set members grow with the
// cluster. Written for `iptables-restore --noflush --counters`, nat table first.

import type { IPFamily } from "@switchyard/basics";
import { chainLine, LineBuffer, quoted } from "../iptables/line-buffer.js";
import { ifNotLocal, masqueradeMark } from "../iptables/options.js";
import type { IPSetMembers } from "./ipset.js";
import * as N from "./names.js";
import type { IPVSOptions } from "./options.js";

/** An LB VIP:port the node itself must not reach (its source ranges exclude the node IP). */
export interface NoNodeAccess {
  readonly ip: string;
  readonly protocol: "tcp" | "udp" | "sctp";
  readonly port: number;
}

interface Sets {
  name(base: string): string;
  comment(base: string): string;
  nonEmpty(base: string): boolean;
}

function setsView(members: IPSetMembers, family: IPFamily): Sets {
  return {
    name: (base) => N.ipsetName(base, family),
    comment: (base) => quoted(N.ipsetInfo(base).comment),
    nonEmpty: (base) => (members.get(base)?.size ?? 0) > 0,
  };
}

/** What every section below writes with: the node's options, the ipsets, and both tables. */
interface RuleContext {
  readonly options: IPVSOptions;
  readonly sets: Sets;
  readonly mark: string;
  readonly nat: LineBuffer;
  readonly filter: LineBuffer;
}

export function ipvsIPTablesRestore(
  options: IPVSOptions,
  members: IPSetMembers,
  noNodeAccess: readonly NoNodeAccess[],
): string {
  const ctx: RuleContext = {
    options,
    sets: setsView(members, options.family),
    mark: masqueradeMark(options),
    nat: new LineBuffer(),
    filter: new LineBuffer(),
  };
  writeServiceSetJumps(ctx);
  writeClusterIPMasquerade(ctx);
  writeExternalIPRules(ctx);
  writeNodePortAndFirewallRules(ctx, noNodeAccess);
  writeIPVSAccepts(ctx);
  writeForwardRules(ctx);
  writeIPVSFilter(ctx);
  writePostrouting(ctx);
  return [
    "*nat",
    ...N.NAT_CHAINS.map(chainLine),
    ...ctx.nat.lines,
    "COMMIT",
    "*filter",
    ...N.FILTER_CHAINS.map(chainLine),
    ...ctx.filter.lines,
    "COMMIT",
    "",
  ].join("\n");
}

function writeServiceSetJumps({ options, sets, nat, filter }: RuleContext): void {
  // Connections from localhost never reach a Service through these rules.
  nat.write(
    "-A",
    N.KUBE_SERVICES,
    "-s",
    options.family === "IPv4" ? "127.0.0.0/8" : "::1/128",
    "-j",
    "RETURN",
  );
  for (const jump of N.SET_JUMPS) {
    if (!sets.nonEmpty(jump.set)) continue;
    const out = jump.table === "nat" ? nat : filter;
    out.write(
      "-A",
      jump.from,
      jump.protocol ? ["-p", jump.protocol] : [],
      commentedSetMatch(sets, jump.set),
      jump.flags,
      "-j",
      jump.to,
    );
  }
}

function writeClusterIPMasquerade({ options, sets, nat }: RuleContext): void {
  if (!sets.nonEmpty(N.CLUSTER_IP)) return;
  const head = ["-A", N.KUBE_SERVICES, ...commentedSetMatch(sets, N.CLUSTER_IP)];
  const notLocal = ifNotLocal(options.localDetector);
  if (options.masqueradeAll) nat.write(head, "dst,dst", "-j", N.KUBE_MARK_MASQ);
  else if (notLocal) nat.write(head, "dst,dst", notLocal, "-j", N.KUBE_MARK_MASQ);
  // Without a way to tell pods apart, only node traffic sourced from a VIP is masqueraded:
  // the kernel picks the VIP (on kube-ipvs0) as source when the node connects to it.
  else nat.write(head, "src,dst", "-j", N.KUBE_MARK_MASQ);
}

function writeExternalIPRules({ sets, nat }: RuleContext): void {
  const externalIPAccepts = (head: readonly string[]) => {
    // Traffic from off the node (not bridged from a pod, not from a local address) ...
    nat.write(
      head,
      "-m",
      "physdev",
      "!",
      "--physdev-is-in",
      "-m",
      "addrtype",
      "!",
      "--src-type",
      "LOCAL",
      "-j",
      "ACCEPT",
    );
    // ... and traffic to an external IP the node already owns (a cloud LB VIP) stays local.
    nat.write(head, "-m", "addrtype", "--dst-type", "LOCAL", "-j", "ACCEPT");
  };
  if (sets.nonEmpty(N.EXTERNAL_IP)) {
    const head = ["-A", N.KUBE_SERVICES, ...commentedSetMatch(sets, N.EXTERNAL_IP), "dst,dst"];
    nat.write(head, "-j", N.KUBE_MARK_MASQ);
    externalIPAccepts(head);
  }
  if (sets.nonEmpty(N.EXTERNAL_IP_LOCAL)) {
    externalIPAccepts(["-A", N.KUBE_SERVICES, ...commentedSetMatch(sets, N.EXTERNAL_IP_LOCAL), "dst,dst"]);
  }
}

function writeNodePortAndFirewallRules(
  { nat, filter }: RuleContext,
  noNodeAccess: readonly NoNodeAccess[],
): void {
  nat.write("-A", N.KUBE_SERVICES, "-m", "addrtype", "--dst-type", "LOCAL", "-j", N.KUBE_NODE_PORT);
  nat.write("-A", N.KUBE_LOAD_BALANCER, "-j", N.KUBE_MARK_MASQ);
  filter.write("-A", N.KUBE_SOURCE_RANGES_FIREWALL, "-j", "DROP");
  for (const e of noNodeAccess) {
    // From the node, IPVS sees the VIP as both source and virtual address.
    filter.write(
      "-A",
      N.KUBE_IPVS_OUT_FILTER,
      ["-s", e.ip, "-m", "ipvs", "--vaddr", e.ip, "--vproto", e.protocol, "--vport", String(e.port)],
      "-j",
      "DROP",
    );
  }
}

function writeIPVSAccepts({ sets, nat }: RuleContext): void {
  // Accept what IPVS will handle, in case later rules (not ours) would drop it; last in chain.
  for (const base of [N.CLUSTER_IP, N.LOAD_BALANCER]) {
    if (sets.nonEmpty(base))
      nat.write("-A", N.KUBE_SERVICES, setMatch(sets, base), "dst,dst", "-j", "ACCEPT");
  }
}

function writeForwardRules({ sets, mark, filter }: RuleContext): void {
  // Forward what we marked even when the FORWARD policy is DROP (NodePorts to other nodes).
  filter.write(
    "-A",
    N.KUBE_FORWARD,
    ["-m", "comment", "--comment", quoted("kubernetes forwarding rules")],
    ["-m", "mark", "--mark", `${mark}/${mark}`, "-j", "ACCEPT"],
  );
  filter.write(
    "-A",
    N.KUBE_FORWARD,
    ["-m", "comment", "--comment", quoted("kubernetes forwarding conntrack rule")],
    ["-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"],
  );
  filter.write(
    "-A",
    N.KUBE_NODE_PORT,
    commentedSetMatch(sets, N.HEALTH_CHECK_NODE_PORT),
    "dst",
    "-j",
    "ACCEPT",
  );
}

function writeIPVSFilter({ sets, filter }: RuleContext): void {
  // A VIP on kube-ipvs0 would otherwise expose every host port; only Service ports pass.
  for (const [base, flags] of [
    [N.LOAD_BALANCER, "dst,dst"],
    [N.CLUSTER_IP, "dst,dst"],
    [N.EXTERNAL_IP, "dst,dst"],
    [N.EXTERNAL_IP_LOCAL, "dst,dst"],
    [N.HEALTH_CHECK_NODE_PORT, "dst"],
  ] as const) {
    filter.write("-A", N.KUBE_IPVS_FILTER, setMatch(sets, base), flags, "-j", "RETURN");
  }
  filter.write(
    "-A",
    N.KUBE_IPVS_FILTER,
    ["-m", "conntrack", "--ctstate", "NEW"],
    setMatch(sets, N.IPVS_IPS),
    "dst",
    "-j",
    "REJECT",
  );
}

function writePostrouting({ options, mark, nat }: RuleContext): void {
  nat.write("-A", N.KUBE_POSTROUTING, "-m", "mark", "!", "--mark", `${mark}/${mark}`, "-j", "RETURN");
  // Clear the mark so a packet that traverses the stack again is not masqueraded twice.
  nat.write("-A", N.KUBE_POSTROUTING, "-j", "MARK", "--xor-mark", mark);
  nat.write(
    "-A",
    N.KUBE_POSTROUTING,
    ["-m", "comment", "--comment", quoted("kubernetes service traffic requiring SNAT")],
    ["-j", "MASQUERADE"],
    options.randomFully === false ? [] : ["--random-fully"],
  );
  nat.write("-A", N.KUBE_MARK_MASQ, "-j", "MARK", "--or-mark", mark);
}

/** A set match preceded by the set's comment, as kube-proxy writes its jump rules. */
function commentedSetMatch(sets: Sets, base: string): string[] {
  return ["-m", "comment", "--comment", sets.comment(base), ...setMatch(sets, base)];
}

function setMatch(sets: Sets, base: string): string[] {
  return ["-m", "set", "--match-set", sets.name(base)];
}
