// Removing what kube-proxy left in the kernel: on start-up, the rules of the modes we are
// not running (so switching modes needs only a restart), and everything under --cleanup.
import type { IPFamily } from "../util/ip.js";
import { CommandNotFoundError } from "./exec.js";
import type { IPTablesTableName, IptablesRestoreApplier } from "./iptables-restore.js";
import type { NftApplier } from "./nft-applier.js";

export type ProxyMode = "iptables" | "ipvs" | "nftables";

/** Chains kube-proxy's iptables mode creates, per table. KUBE-FIREWALL is kubelet's: left alone. */
const OWNED_CHAINS: Readonly<Record<"nat" | "filter" | "mangle", readonly string[]>> = {
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
/** Per-service nat chains: the prefix plus a 16-character hash. */
const PER_SERVICE_PREFIXES = ["KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-FW-", "KUBE-SEP-"];

export const CLEANUP_TABLES = ["nat", "filter", "mangle"] as const;

function isOwned(table: (typeof CLEANUP_TABLES)[number], chain: string): boolean {
  if (OWNED_CHAINS[table].includes(chain)) return true;
  return table === "nat" && PER_SERVICE_PREFIXES.some((p) => chain.startsWith(p));
}

/**
 * The iptables-restore --noflush input that removes our chains from one table, given that
 * table's iptables-save output; null when there is nothing of ours. Every rule elsewhere
 * that jumps into one of our chains is deleted by its exact text, our chains are flushed
 * (declaring a chain in restore input empties it) and then deleted.
 */
export function iptablesCleanupScript(table: (typeof CLEANUP_TABLES)[number], save: string): string | null {
  const lines = save.split("\n");
  const ours = new Set(
    lines
      .map((l) => /^:(\S+) /.exec(l)?.[1])
      .filter((c): c is string => c !== undefined && isOwned(table, c)),
  );
  if (ours.size === 0) return null;
  const deletes: string[] = [];
  for (const line of lines) {
    const m = /^-A (\S+) .*-j (\S+)/.exec(line);
    if (m && !ours.has(m[1] ?? "") && ours.has(m[2] ?? "")) deletes.push(`-D${line.slice(2)}`);
  }
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

/** Removes kube-proxy's iptables chains and jump rules from nat, filter and mangle. */
export async function cleanupIPTablesLeftovers(ipt: IptablesRestoreApplier): Promise<void> {
  for (const table of CLEANUP_TABLES) {
    const script = iptablesCleanupScript(table, await ipt.save(table as IPTablesTableName));
    if (script) await ipt.restore(script, { noflush: true });
  }
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
}

/**
 * What kube-proxy does before starting in `mode`: remove the other modes' rules. With
 * `cleanupAndExit` (--cleanup) every mode's rules go. A missing binary means that mode
 * cannot have left rules and is skipped; other failures are collected, not fatal midway.
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
  if (cleanupAndExit || mode === "nftables") {
    for (const ipt of targets.iptables ?? []) await attempt(() => cleanupIPTablesLeftovers(ipt));
  }
  if ((cleanupAndExit || mode !== "nftables") && targets.nft) {
    const nft = targets.nft;
    await attempt(() => cleanupNFTablesLeftovers(nft));
  }
  if (errors.length > 0) throw new AggregateError(errors, `cleanup: ${errors.length} step(s) failed`);
}
