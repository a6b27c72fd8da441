// The fixed part of kube-proxy's iptables rules: jumps from the built-in chains into ours
// (declared as data, ensured on full syncs), the canary chains and the per-sync fixed rules.
import {
  CT_STATE_INVALID_NFACCT,
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
import { type IPTablesOptions, localhostNodePortsEnabled, masqueradeMark } from "./options.js";
import { commentArgs } from "./rule-args.js";

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
  const comment = jump.comment === "" ? [] : commentArgs(jump.comment);
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

/** One rule of the fixed part: "-A chain args…" in the restore input. */
export interface FixedRule {
  readonly chain: string;
  readonly args: readonly string[];
}

/**
 * What every sync writes besides the Service ports: the top-level chains, and the fixed rules
 * that go before the per-service ones (head) and after them (tail).
 */
export interface FixedRules {
  readonly filterChains: readonly string[];
  readonly natChains: readonly string[];
  readonly filterHead: readonly FixedRule[];
  readonly natHead: readonly FixedRule[];
  readonly filterTail: readonly FixedRule[];
  /** The jumps into KUBE-NODEPORTS, which must stay the last rules of KUBE-SERVICES. */
  readonly natTail: readonly FixedRule[];
}

// route_localnet makes 127/8 routable, which would let others reach the node's localhost
// services; kubelet writes the same rule, so it must stay byte-compatible.
const BLOCK_LOCALNET_RULE: FixedRule = {
  chain: KUBELET_FIREWALL_CHAIN,
  args: [
    ...commentArgs('"block incoming localnet connections"'),
    ...["-d", "127.0.0.0/8", "!", "-s", "127.0.0.0/8"],
    ...["-m", "conntrack", "!", "--ctstate", "RELATED,ESTABLISHED,DNAT", "-j", "DROP"],
  ],
};

export function fixedRules(options: IPTablesOptions): FixedRules {
  const mark = masqueradeMark(options);
  const marked = `${mark}/${mark}`;
  const localhostNodePorts = localhostNodePortsEnabled(options);
  return {
    filterChains: localhostNodePorts ? [...FILTER_TOP_CHAINS, KUBELET_FIREWALL_CHAIN] : FILTER_TOP_CHAINS,
    natChains: NAT_TOP_CHAINS,
    filterHead: localhostNodePorts ? [BLOCK_LOCALNET_RULE] : [],
    natHead: [
      { chain: KUBE_POSTROUTING_CHAIN, args: ["-m", "mark", "!", "--mark", marked, "-j", "RETURN"] },
      // Clear the mark so a packet that traverses the stack again is not masqueraded twice.
      { chain: KUBE_POSTROUTING_CHAIN, args: ["-j", "MARK", "--xor-mark", mark] },
      {
        chain: KUBE_POSTROUTING_CHAIN,
        args: [
          ...commentArgs('"kubernetes service traffic requiring SNAT"'),
          ...["-j", "MASQUERADE"],
          ...(options.randomFully === false ? [] : ["--random-fully"]),
        ],
      },
      { chain: KUBE_MARK_MASQ_CHAIN, args: ["-j", "MARK", "--or-mark", mark] },
    ],
    filterTail: [
      ...invalidDropRules(options),
      // Forward what we marked for masquerading, even when the FORWARD policy is DROP.
      {
        chain: KUBE_FORWARD_CHAIN,
        args: [
          ...commentArgs('"kubernetes forwarding rules"'),
          "-m",
          "mark",
          "--mark",
          marked,
          "-j",
          "ACCEPT",
        ],
      },
      {
        chain: KUBE_FORWARD_CHAIN,
        args: [
          ...commentArgs('"kubernetes forwarding conntrack rule"'),
          ...["-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"],
        ],
      },
    ],
    natTail: nodePortsJumpRules(options, localhostNodePorts),
  };
}

// Without nf_conntrack_tcp_be_liberal, an out-of-window packet is INVALID and would be
// passed on un-NATed, so the endpoint answers with a reset (kubernetes#74839).
function invalidDropRules(options: IPTablesOptions): FixedRule[] {
  if (options.conntrackTCPLiberal) return [];
  const counter = options.nfacctCounters?.ctStateInvalidDropped
    ? ["-m", "nfacct", "--nfacct-name", CT_STATE_INVALID_NFACCT]
    : [];
  return [
    {
      chain: KUBE_FORWARD_CHAIN,
      args: ["-m", "conntrack", "--ctstate", "INVALID", ...counter, "-j", "DROP"],
    },
  ];
}

function nodePortsJumpRules(options: IPTablesOptions, localhostNodePorts: boolean): FixedRule[] {
  const comment = commentArgs(
    '"kubernetes service nodeports; NOTE: this must be the last rule in this chain"',
  );
  const jump = ["-j", KUBE_NODEPORTS_CHAIN];
  if (options.nodePortAddresses === "all") {
    const destinations = ["-m", "addrtype", "--dst-type", "LOCAL"];
    // Localhost NodePorts never work on IPv6, and on IPv4 only with route_localnet.
    if (options.family === "IPv6") destinations.push("!", "-d", "::1/128");
    else if (!localhostNodePorts) destinations.push("!", "-d", "127.0.0.0/8");
    return [{ chain: KUBE_SERVICES_CHAIN, args: [...comment, ...destinations, ...jump] }];
  }
  const rules: FixedRule[] = [];
  for (const ip of options.nodePortAddresses) {
    const loopback = ip.startsWith("127.") || ip === "::1";
    if (loopback && !localhostNodePorts) continue;
    rules.push({ chain: KUBE_SERVICES_CHAIN, args: [...comment, "-d", ip, ...jump] });
  }
  return rules;
}
