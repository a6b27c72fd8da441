// Writes fixtures/nftables.txt and fixtures/iptables.txt: the fixture cluster rendered for node-1, loaded
// into a scratch network namespace's kernel and listed back, exactly as `explain` reads a node. Needs root,
// nft and iptables:  node --import tsx lab/test/explain/make-fixtures.ts
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderedIPTables, renderedNFTables } from "./render-fixture.js";

const ns = `sy-explain-fixture-${process.pid}`;
const inNs = (argv: string[], input?: string) =>
  execFileSync("ip", ["netns", "exec", ns, ...argv], { encoding: "utf8", ...(input ? { input } : {}) });
const dir = join(import.meta.dirname, "fixtures");

execFileSync("ip", ["netns", "add", ns]);
try {
  inNs(["nft", "-f", "-"], renderedNFTables().dump());
  writeFileSync(join(dir, "nftables.txt"), inNs(["nft", "list", "table", "ip", "kube-proxy"]));
  inNs(["iptables-restore"], renderedIPTables().dump(["filter", "nat"]));
  // The time stamps iptables-save writes would make every run differ.
  const saved = inNs(["iptables-save", "-t", "filter"]) + inNs(["iptables-save", "-t", "nat"]);
  writeFileSync(join(dir, "iptables.txt"), saved.replace(/^# (Generated|Completed).*\n/gm, ""));
} finally {
  execFileSync("ip", ["netns", "delete", ns]);
}
