// Reading a node's kernel for `explain` and `trace`: its proxy's mode, the proxy's ruleset and the node's own
// addresses, through the argv prefix that runs a command on the node (ip netns exec / docker exec).
import type { Exec } from "../exec.js";
import { proxyMode } from "../scenarios/kit/node-proxy.js";
import { runAt } from "../scenarios/kit/pod-run.js";
import type { LiveRuleset, ProxyMode } from "./load.js";
import { parseAddresses } from "./node-addresses.js";

export interface NodeRuleset extends LiveRuleset {
  /** The command that printed it. */
  source: string;
}

type Family = "IPv4" | "IPv6";

const nftTable = (family: Family) => ["nft", "list", "table", family === "IPv6" ? "ip6" : "ip", "kube-proxy"];

/** Both iptables backends, newest first; kube-proxy writes through whichever its node uses. */
const saveCommands = (family: Family) => {
  const x = family === "IPv6" ? "ip6tables" : "iptables";
  return [`${x}-nft-save`, `${x}-legacy-save`, `${x}-save`];
};

/**
 * The mode of the node's proxy, as its metrics server answers (/proxyMode), else from the rules themselves:
 * nftables when the kube-proxy table dispatches Services, iptables otherwise.
 */
export async function nodeProxyMode(exec: Exec, at: readonly string[], family: Family): Promise<ProxyMode> {
  const said = await proxyMode(exec, at);
  if (said === "iptables" || said === "nftables") return said;
  if (said === "ebpf")
    throw new Error(
      "this node's proxy runs ebpf mode, whose Services are in BPF maps; only rules are read yet",
    );
  const table = await runAt(exec, at, nftTable(family));
  return /map service-ips \{/.test(table) ? "nftables" : "iptables";
}

/** The proxy's live rules on the node; one line naming what was tried when there are none. */
export async function readNodeRuleset(
  exec: Exec,
  at: readonly string[],
  mode: ProxyMode,
  family: Family,
): Promise<NodeRuleset> {
  if (mode === "nftables") {
    const argv = nftTable(family);
    const text = await exec([...at, ...argv]);
    return { mode, text, source: argv.join(" ") };
  }
  for (const command of saveCommands(family)) {
    const text = await runAt(exec, at, [command]);
    if (/^:KUBE-SERVICES /m.test(text)) return { mode, text, source: command };
  }
  throw new Error(
    `no KUBE-SERVICES chain in ${saveCommands(family).join(", ")} on the node: is its proxy running?`,
  );
}

/** The node's own addresses (and loopback's). */
export async function nodeAddresses(exec: Exec, at: readonly string[]): Promise<string[]> {
  return parseAddresses(await exec([...at, "ip", "-o", "addr", "show"]));
}
