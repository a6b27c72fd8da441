// Reading a node's kernel for `explain`, `lb list` and `trace`: its proxy's mode, the proxy's ruleset and the
// node's own addresses, through the argv prefix that runs a command on the node (ip netns exec / docker exec);
// in ebpf mode the proxy's pinned maps instead, opened from this process (a netns lab's nodes share its bpffs).
import type { IPFamily } from "@switchyard/basics";
import { KernelBPFMapError, KernelBPFMapStore } from "@switchyard/proxier";
import type { Exec } from "../exec.js";
import { proxyMode } from "../scenarios/kit/node-proxy.js";
import { runAt } from "../scenarios/kit/pod-run.js";
import { type FamilyMaps, proxyMaps, type RawEntries } from "./bpf-maps.js";
import type { LiveRuleset, ProxyMode } from "./load.js";
import { parseAddresses } from "./node-addresses.js";

/** A node as these reads reach it. */
export interface ReadableNode {
  /** The argv prefix that runs a command on the node. */
  run: readonly string[];
  /** Where its proxy pins ebpf mode's maps, when this process can open them (a netns lab's node). */
  bpfRoot?: string;
}

/** One node's proxy state, read again on every call: its rules or its maps, of one family. */
export interface NodeReader {
  mode: ProxyMode;
  /** What is read, for the report: "nft list table ip kube-proxy", "iptables-nft-save", the maps' pin root. */
  source: string;
  read(): Promise<LiveRuleset>;
}

const nftTable = (family: IPFamily) => [
  "nft",
  "list",
  "table",
  family === "IPv6" ? "ip6" : "ip",
  "kube-proxy",
];

/** Both iptables backends, newest first; kube-proxy writes through whichever its node uses. */
const saveCommands = (family: IPFamily) => {
  const x = family === "IPv6" ? "ip6tables" : "iptables";
  return [`${x}-nft-save`, `${x}-legacy-save`, `${x}-save`];
};

const ENOENT = 2;

/**
 * One family's proxy-owned maps under `bpfRoot`, dumped now; undefined when that family's maps are not pinned
 * there (a proxy of one family removes the other's pins). Each read opens the pins anew: a proxy that restarts
 * with resized maps pins new ones, and a descriptor kept open would go on reading the old.
 */
export async function readPinnedMaps(bpfRoot: string, family: IPFamily): Promise<FamilyMaps | undefined> {
  const store = await KernelBPFMapStore.open(bpfRoot);
  try {
    const dumps: Partial<Record<(typeof proxyMaps)[number], RawEntries>> = {};
    for (const map of proxyMaps) dumps[map] = await store.dump(family, map);
    const { services = [], backends = [], revNat = [] } = dumps;
    return { family, dumps: { services, backends, revNat } };
  } catch (err) {
    if (err instanceof KernelBPFMapError && err.errno === ENOENT) return undefined;
    throw err;
  } finally {
    store.close();
  }
}

/**
 * The mode of the node's proxy, as its metrics server answers (/proxyMode), else from the kernel itself: ebpf
 * when the node's maps are pinned, nftables when the kube-proxy table dispatches Services, iptables otherwise.
 */
export async function nodeProxyMode(exec: Exec, node: ReadableNode, family: IPFamily): Promise<ProxyMode> {
  const said = await proxyMode(exec, node.run);
  if (said === "iptables" || said === "nftables" || said === "ebpf") return said;
  if (node.bpfRoot && (await readPinnedMaps(node.bpfRoot, family).catch(() => undefined))) return "ebpf";
  const table = await runAt(exec, node.run, nftTable(family));
  return /map service-ips \{/.test(table) ? "nftables" : "iptables";
}

function mapsReader(bpfRoot: string | undefined, family: IPFamily): NodeReader {
  if (!bpfRoot)
    throw new Error(
      "the node's proxy runs in ebpf mode, and this process finds no way to its pins (a kind node's container is not running?)",
    );
  const read = async (): Promise<LiveRuleset> => {
    const maps = await readPinnedMaps(bpfRoot, family);
    if (!maps) throw new Error(`no ${family} maps pinned under ${bpfRoot}: is the node's proxy running?`);
    return { mode: "ebpf", maps };
  };
  return { mode: "ebpf", source: `maps pinned under ${bpfRoot}`, read };
}

/** The iptables-save that holds the proxy's chains; one line naming what was tried when none does. */
async function findSaveCommand(exec: Exec, at: readonly string[], family: IPFamily): Promise<string> {
  for (const command of saveCommands(family)) {
    if (/^:KUBE-SERVICES /m.test(await runAt(exec, at, [command]))) return command;
  }
  throw new Error(
    `no KUBE-SERVICES chain in ${saveCommands(family).join(", ")} on the node: is its proxy running?`,
  );
}

/** A reader of the node's proxy state in `mode`, for the packets of `family`. */
export async function nodeReader(
  exec: Exec,
  node: ReadableNode,
  mode: ProxyMode,
  family: IPFamily,
): Promise<NodeReader> {
  if (mode === "ebpf") return mapsReader(node.bpfRoot, family);
  const argv = mode === "nftables" ? nftTable(family) : [await findSaveCommand(exec, node.run, family)];
  const read = async (): Promise<LiveRuleset> => ({ mode, text: await exec([...node.run, ...argv]) });
  return { mode, source: argv.join(" "), read };
}

/** The node's own addresses (and loopback's). */
export async function nodeAddresses(exec: Exec, at: readonly string[]): Promise<string[]> {
  return parseAddresses(await exec([...at, "ip", "-o", "addr", "show"]));
}
