// A node's live ruleset loaded into the proxier's fakes, ready for its tracers.
import { Transaction } from "@switchyard/proxier";
import { FakeIPTables, FakeNFTables } from "@switchyard/proxier/trace";
import { savedTables } from "./iptables-save.js";
import { parseNftListing } from "./nft-listing.js";

export type ProxyMode = "iptables" | "nftables";

/** What was read from the node: `nft list table ip kube-proxy` or `iptables-save` output. */
export interface LiveRuleset {
  mode: ProxyMode;
  text: string;
}

export type LoadedRuleset =
  | { mode: "nftables"; nft: FakeNFTables; problems: string[] }
  | { mode: "iptables"; ipt: FakeIPTables; problems: string[] };

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
  return live.mode === "nftables" ? loadNftables(live.text) : loadIPTables(live.text);
}
