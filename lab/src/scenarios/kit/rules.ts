import type { Exec } from "../../exec.js";
import { runAt } from "./pod-run.js";

/** Everything a node's namespace holds of proxy rules: both iptables backends' dumps and the nftables ruleset. */
export async function nodeRules(exec: Exec, at: readonly string[]): Promise<string> {
  const [legacy, nft, ruleset] = await Promise.all([
    runAt(exec, at, ["iptables-legacy-save"]),
    runAt(exec, at, ["iptables-nft-save"]),
    runAt(exec, at, ["nft", "list", "ruleset"]),
  ]);
  return `${legacy}\n${nft}\n${ruleset}`;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Whether a node's rules still send traffic to `ip`: an iptables KUBE-SEP chain that DNATs to it and is jumped
 * to from a Service chain, or an nftables Service rule that DNATs to it (`dnat to ip:port`, a numgen map entry
 * `n : ip . port`) or jumps to its endpoint chain. An endpoint chain nothing jumps to any more does not count:
 * nftables mode deletes those a second later, in a separate transaction.
 */
export function sendsTo(rules: string, ip: string): boolean {
  const lines = rules.split("\n");
  const seps = new Set<string>();
  const dnat = new RegExp(`--to-destination ${escapeRegex(ip)}:`);
  for (const l of lines) {
    const m = /^-A (KUBE-SEP-\S+) /.exec(l);
    if (m?.[1] && dnat.test(l)) seps.add(m[1]);
  }
  for (const l of lines) {
    const m = /^-A (\S+) .*-j (KUBE-SEP-\S+)/.exec(l);
    if (m?.[1] && !m[1].startsWith("KUBE-SEP-") && m[2] && seps.has(m[2])) return true;
  }
  const target = new RegExp(
    `(dnat to ${escapeRegex(ip)}:)|(: ${escapeRegex(ip)} \\. )|((goto|jump) "?endpoint-\\S*__${escapeRegex(ip)}/)`,
  );
  // Only inside kube-proxy's own tables: iptables-nft's tables show up in `nft list ruleset` too.
  let table = "";
  let chain = "";
  for (const l of lines) {
    const t = /^table (\S+) (\S+) \{/.exec(l);
    if (t?.[2]) table = t[2];
    const c = /^\s*chain (\S+) \{/.exec(l);
    if (c?.[1]) chain = c[1].replace(/"/g, "");
    if (table === "kube-proxy" && !chain.startsWith("endpoint-") && target.test(l)) return true;
  }
  return false;
}
