// A node's live ruleset loaded into the proxier's fakes, ready for its tracers; in ebpf mode, its maps decoded.
import { type MapContents, Transaction } from "@switchyard/proxier";
import { FakeIPTables, FakeNFTables } from "@switchyard/proxier/trace";
import { decodeMaps, type FamilyMaps } from "./bpf-maps.js";
import { savedTables } from "./iptables-save.js";
import { parseNftListing } from "./nft-listing.js";

export type ProxyMode = "iptables" | "nftables" | "ebpf";

/**
 * What was read from the node: `nft list table ip kube-proxy` or `iptables-save` output, or in ebpf mode the
 * entries of its pinned maps.
 */
export type LiveRuleset =
  | { mode: "iptables" | "nftables"; text: string }
  | { mode: "ebpf"; maps: FamilyMaps };

export type LoadedRuleset =
  | { mode: "nftables"; nft: FakeNFTables; problems: string[] }
  | { mode: "iptables"; ipt: FakeIPTables; problems: string[] }
  | { mode: "ebpf"; contents: MapContents; problems: string[] };

/**
 * Loads an nft listing into a FakeNFTables: in one transaction when the whole of it applies, else object by
 * object, so that one object the fake refuses (a reference it cannot resolve) costs only that object.
 */
function loadNftables(text: string): LoadedRuleset {
  const listing = parseNftListing(text);
  const nft = new FakeNFTables(listing.family, listing.table);
  const problems = [...listing.skipped];
  const tx = new Transaction(listing.family, listing.table);
  for (const o of listing.objects) tx.add(o);
  try {
    nft.run(tx);
  } catch {
    for (const o of listing.objects) {
      const one = new Transaction(listing.family, listing.table);
      one.add(o);
      try {
        nft.run(one);
      } catch (err) {
        problems.push(`not loaded: ${(err as Error).message}`);
      }
    }
  }
  return { mode: "nftables", nft, problems };
}

function loadIPTables(text: string): LoadedRuleset {
  const { restore, skipped } = savedTables(text);
  const ipt = new FakeIPTables();
  ipt.restore(restore, { noflush: false });
  return { mode: "iptables", ipt, problems: skipped };
}

export function loadRuleset(live: LiveRuleset): LoadedRuleset {
  if (live.mode === "ebpf") return { mode: "ebpf", ...decodeMaps(live.maps) };
  return live.mode === "nftables" ? loadNftables(live.text) : loadIPTables(live.text);
}
