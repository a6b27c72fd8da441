// Removing what kube-proxy left in the kernel: on start-up, the rules of the modes we are
// not running (so switching modes needs only a restart), and everything under --cleanup.

import type { IPFamily } from "@switchyard/basics";
import { IPSETS, ipsetName } from "../ipvs/names.js";
import { CommandNotFoundError } from "./exec.js";
import type { IptablesRestoreApplier } from "./iptables-restore.js";
import type { IPVSApplier } from "./ipvs-applier.js";
import type { NftApplier } from "./nft-applier.js";

/** kube-proxy's three modes, and ebpf: not an upstream mode (socket-level balancing as Cilium's kube-proxy replacement). */
export type ProxyMode = "iptables" | "ipvs" | "nftables" | "ebpf";

/** Chains kube-proxy's iptables mode creates, per table. KUBE-FIREWALL is kubelet's: left alone. */
const OWNED_CHAINS: Readonly<Record<CleanupTable, readonly string[]>> = {
  nat: ["KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ", "KUBE-PROXY-CANARY"],
  filter: [
    "KUBE-SERVICES",
    "KUBE-EXTERNAL-SERVICES",
    "KUBE-FORWARD",
    "KUBE-NODEPORTS",
    "KUBE-PROXY-FIREWALL",
    "KUBE-PROXY-CANARY",
  ],
  mangle: ["KUBE-PROXY-CANARY"],
};
/** Chains only IPVS mode creates; it shares the others with iptables mode. */
const IPVS_ONLY_CHAINS: Readonly<Record<CleanupTable, readonly string[]>> = {
  nat: ["KUBE-NODE-PORT", "KUBE-LOAD-BALANCER"],
  filter: ["KUBE-NODE-PORT", "KUBE-SOURCE-RANGES-FIREWALL", "KUBE-IPVS-FILTER", "KUBE-IPVS-OUT-FILTER"],
  mangle: [],
};
/** Per-service nat chains: the prefix plus a 16-character hash. */
const PER_SERVICE_PREFIXES = ["KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-FW-", "KUBE-SEP-"];

export const CLEANUP_TABLES = ["nat", "filter", "mangle"] as const;
export type CleanupTable = (typeof CLEANUP_TABLES)[number];

/**
 * "all": every chain of iptables and IPVS mode (--cleanup, or starting in nftables mode).
 * "ipvs": only what IPVS mode adds to iptables mode's chains, so iptables mode can start
 * over IPVS leftovers: the IPVS-only chains, and the ipset matches in the shared chains
 * (the kernel refuses to destroy a set a rule still references).
 */
export type CleanupScope = "all" | "ipvs";

function isOwned(scope: CleanupScope, table: CleanupTable, chain: string): boolean {
  if (IPVS_ONLY_CHAINS[table].includes(chain)) return true;
  if (scope === "ipvs") return false;
  if (OWNED_CHAINS[table].includes(chain)) return true;
  return table === "nat" && PER_SERVICE_PREFIXES.some((p) => chain.startsWith(p));
}

/**
 * The iptables-restore --noflush input that removes our chains from one table, given that
 * table's iptables-save output; null when there is nothing of ours. Every rule elsewhere
 * that jumps into one of our chains is deleted by its exact text, our chains are flushed
 * (declaring a chain in restore input empties it) and then deleted.
 */
export function iptablesCleanupScript(
  table: CleanupTable,
  save: string,
  scope: CleanupScope = "all",
): string | null {
  const lines = save.split("\n");
  const declared = lines.map((l) => /^:(\S+) /.exec(l)?.[1]).filter((c): c is string => c !== undefined);
  const ours = new Set(declared.filter((c) => isOwned(scope, table, c)));
  const deletes: string[] = [];
  for (const line of lines) {
    const m = /^-A (\S+) /.exec(line);
    const chain = m?.[1];
    if (chain === undefined || ours.has(chain)) continue;
    const target = /-j (\S+)/.exec(line)?.[1] ?? "";
    const ipvsMatch =
      scope === "ipvs" && OWNED_CHAINS[table].includes(chain) && / --match-set KUBE-/.test(line);
    if (ours.has(target) || ipvsMatch) deletes.push(`-D${line.slice(2)}`);
  }
  if (ours.size === 0 && deletes.length === 0) return null;
  const sorted = [...ours].sort();
  return [
    `*${table}`,
    ...sorted.map((c) => `:${c} - [0:0]`),
    ...deletes,
    ...sorted.map((c) => `-X ${c}`),
    "COMMIT",
    "",
  ].join("\n");
}

/** Each table of an iptables-save dump, by name, with its own lines (from `*table` to its COMMIT). */
export function tablesOfSave(save: string): Map<string, string> {
  const out = new Map<string, string>();
  let name: string | undefined;
  let lines: string[] = [];
  for (const line of save.split("\n")) {
    const start = /^\*(\S+)/.exec(line)?.[1];
    if (start) [name, lines] = [start, []];
    if (name) lines.push(line);
    if (name && line === "COMMIT") {
      out.set(name, `${lines.join("\n")}\n`);
      name = undefined;
    }
  }
  return out;
}

/**
 * Removes kube-proxy's iptables chains and jump rules from nat, filter and mangle. Only tables that exist are
 * read (one plain save): asking the legacy backend about a table creates it, and on a node whose rules are in
 * nf_tables that would leave empty legacy tables behind, and iptables-nft's "iptables-legacy tables present"
 * warning on every later iptables-save (upstream kube-proxy never touches the backend it does not use).
 */
export async function cleanupIPTablesLeftovers(
  ipt: IptablesRestoreApplier,
  scope: CleanupScope = "all",
): Promise<void> {
  const existing = tablesOfSave(await ipt.saveExisting());
  for (const table of CLEANUP_TABLES) {
    const save = existing.get(table);
    if (save === undefined) continue;
    const script = iptablesCleanupScript(table, save, scope);
    if (script) await ipt.restore(script, { noflush: true });
  }
}

/** Every ipset name IPVS mode may have created, both families. */
export function ipvsIPSetNames(): Set<string> {
  return new Set(IPSETS.flatMap((s) => [ipsetName(s.name, "IPv4"), ipsetName(s.name, "IPv6")]));
}

/** Deletes the `kube-proxy` table of each family (absent tables are fine). */
export async function cleanupNFTablesLeftovers(
  nft: NftApplier,
  families: readonly IPFamily[] = ["IPv4", "IPv6"],
): Promise<void> {
  for (const f of families) await nft.deleteTable(f === "IPv6" ? "ip6" : "ip", "kube-proxy");
}

export interface CleanupTargets {
  readonly nft?: NftApplier;
  /** One applier per family and backend in use (legacy and nft may both hold rules). */
  readonly iptables?: readonly IptablesRestoreApplier[];
  /** ipvsadm, ipset and the kube-ipvs0 link. */
  readonly ipvs?: IPVSApplier;
  /** ebpf mode's pinned programs, links and maps. */
  readonly ebpf?: { remove(): Promise<void> };
}

/**
 * What kube-proxy does before starting in `mode`: remove the other modes' rules. With
 * `cleanupAndExit` (--cleanup) every mode's rules go. A missing binary means that mode
 * cannot have left rules and is skipped; other failures are collected, not fatal midway.
 *
 * Upstream removes IPVS leftovers only when starting in nftables mode or with --cleanup;
 * here iptables mode removes them too (leaving the VIPs on kube-ipvs0 and the virtual
 * servers would keep IPVS answering for Services iptables mode now owns).
 */
export async function platformCleanup(
  targets: CleanupTargets,
  mode: ProxyMode,
  cleanupAndExit = false,
): Promise<void> {
  const errors: unknown[] = [];
  const attempt = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (e) {
      if (!(e instanceof CommandNotFoundError)) errors.push(e);
    }
  };
  // IPVS mode also writes iptables rules, so its start-up keeps them.
  if (cleanupAndExit || mode === "nftables" || mode === "ebpf") {
    for (const ipt of targets.iptables ?? []) await attempt(() => cleanupIPTablesLeftovers(ipt));
  }
  if ((cleanupAndExit || mode !== "ipvs") && targets.ipvs) {
    const ipvs = targets.ipvs;
    if (ipvs.kernelHasIPVS()) await attempt(() => ipvs.clear());
    await attempt(() => ipvs.deleteDummy());
    // The sets go last: the kernel refuses to destroy a set an iptables rule still matches.
    for (const ipt of targets.iptables ?? []) await attempt(() => cleanupIPTablesLeftovers(ipt, "ipvs"));
    await attempt(async () => {
      const ours = ipvsIPSetNames();
      for (const name of await ipvs.listIPSets()) {
        if (ours.has(name)) await attempt(() => ipvs.destroyIPSet(name));
      }
    });
  }
  if ((cleanupAndExit || mode !== "nftables") && targets.nft) {
    const nft = targets.nft;
    await attempt(() => cleanupNFTablesLeftovers(nft));
  }
  // Programs stay attached while their links are pinned, so another mode must unpin them or both would answer.
  if ((cleanupAndExit || mode !== "ebpf") && targets.ebpf) {
    const ebpf = targets.ebpf;
    await attempt(() => ebpf.remove());
  }
  if (errors.length > 0) throw new AggregateError(errors, `cleanup: ${errors.length} step(s) failed`);
}
