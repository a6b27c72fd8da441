// What makes the kernel apply the NAT information the tc program puts into conntrack entries: an nftables nat
// chain registers the namespace's NAT hooks (all four, for IPv4 and IPv6 alike in an inet table), and a rule
// with a ct expression in it turns conntrack itself on. Without both, the entries the program inserts are never
// consulted and traffic to a NodePort reaches the node's own sockets. The chain's one rule counts the flows the
// program handed to a backend (a nat chain sees only each flow's first packet): what `nft list table` shows of it.
//
// The cost: conntrack then tracks every flow of the namespace (as it does under kube-proxy's iptables, IPVS and
// nftables modes alike), and each flow's first packet passes the nat hooks.

import { CommandNotFoundError, type Exec, realExec } from "./exec.js";

export const NAT_HOOKS_TABLE = "switchyard-ebpf";
const CHAIN = "nat-postrouting";

/** One atomic transaction: the table and chain if missing, and the chain's one rule written anew. */
export function natHooksScript(): string {
  return [
    `add table inet ${NAT_HOOKS_TABLE}`,
    `add chain inet ${NAT_HOOKS_TABLE} ${CHAIN} { type nat hook postrouting priority srcnat; policy accept; }`,
    `flush chain inet ${NAT_HOOKS_TABLE} ${CHAIN}`,
    `add rule inet ${NAT_HOOKS_TABLE} ${CHAIN} ct status dnat counter`,
    "",
  ].join("\n");
}

/** Makes sure the NAT hooks and conntrack are on in the namespace `exec` runs in. */
export async function ensureNatHooks(exec: Exec = realExec): Promise<void> {
  const r = await exec("nft", ["-f", "-"], { stdin: natHooksScript() });
  if (r.code !== 0) throw new Error(`eBPF: cannot turn the kernel's NAT hooks on (nft): ${r.stderr.trim()}`);
}

/** Deletes the table; true when there was one. A host without nft has none: nothing to do. */
export async function removeNatHooks(exec: Exec = realExec): Promise<boolean> {
  const r = await exec("nft", ["delete", "table", "inet", NAT_HOOKS_TABLE]).catch((e: unknown) => {
    if (e instanceof CommandNotFoundError) return null;
    throw e;
  });
  if (r === null) return false;
  if (r.code === 0) return true;
  if (/No such file or directory/.test(r.stderr)) return false;
  throw new Error(`eBPF: cannot delete nftables table inet ${NAT_HOOKS_TABLE}: ${r.stderr.trim()}`);
}
