// Live rulesets read back into the proxier's fakes: fixtures/*.txt are what a real kernel listed after the
// fixture cluster's rules were loaded into it (make-fixtures.ts), so these tests read nft's and
// iptables-save's own words, not the renderer's.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { traceIPTablesPacket, tracePacket } from "@switchyard/proxier/trace";
import { savedTables } from "../../src/explain/iptables-save.js";
import { type LoadedRuleset, loadRuleset } from "../../src/explain/load.js";
import { parseNftListing, parsePriority } from "../../src/explain/nft-listing.js";
import { rendererRule } from "../../src/explain/nft-syntax.js";
import { NODE, OUTSIDE_IP, POD_IP } from "./fixture-cluster.js";
import { renderedIPTables, renderedNFTables } from "./render-fixture.js";

const fixture = (name: string) => readFileSync(join(import.meta.dirname, "fixtures", name), "utf8");
const nftText = fixture("nftables.txt");
const iptText = fixture("iptables.txt");

function loaded(mode: "nftables" | "iptables"): LoadedRuleset {
  return loadRuleset({ mode, text: mode === "nftables" ? nftText : iptText });
}

// One packet to every way into every fixture Service, from a pod, from outside and from the node itself.
const destinations: [string, number][] = [
  ["10.96.0.50", 80],
  ["10.96.0.60", 80],
  ["10.96.0.70", 80],
  ["10.96.0.80", 80],
  ["10.96.0.90", 80],
  ["10.96.0.99", 80],
  ["10.96.0.50", 81],
  [NODE.ip, 30080],
];
const packets = [POD_IP, OUTSIDE_IP, NODE.ip].flatMap((sourceIP) =>
  destinations.map(([destIP, destPort]) => ({ sourceIP, destIP, destPort })),
);

/** What a trace says, with probabilities rounded the way iptables-save prints them (to 11 digits). */
function summary(r: {
  output: string;
  masq: boolean;
  errors: readonly string[];
  paths: readonly { output: string; probability: number }[];
}) {
  return { ...r, paths: r.paths.map((p) => `${p.output} ${p.probability.toFixed(6)}`) };
}

describe("nftables listing", () => {
  test("loads back to exactly what the renderer wrote (a one-address set loses its braces in nft's print)", () => {
    const live = loaded("nftables");
    assert.equal(live.mode, "nftables");
    if (live.mode !== "nftables") return;
    assert.deepEqual(live.problems, []);
    const unbrace = (s: string) => s.replace(/\{ ([^ ,{}]+) \}/g, "$1");
    assert.equal(unbrace(live.nft.dump()), unbrace(renderedNFTables().dump()));
  });

  test("every packet is traced the same through the listed table as through the rendered one", () => {
    const live = loaded("nftables");
    if (live.mode !== "nftables") return assert.fail("nftables expected");
    const rendered = renderedNFTables();
    for (const p of packets) {
      const got = tracePacket(live.nft, [NODE.ip], p);
      assert.deepEqual(got.errors, [], JSON.stringify(p));
      assert.deepEqual(summary(got), summary(tracePacket(rendered, [NODE.ip], p)), JSON.stringify(p));
    }
  });

  test("base chains keep their hook and priority, named or numeric", () => {
    const chains = parseNftListing(nftText).objects.filter((o) => o.kind === "chain" && o.hook !== undefined);
    const byName = Object.fromEntries(chains.map((c) => [c.kind === "chain" ? c.name : "", c]));
    assert.deepEqual(byName["filter-prerouting-pre-dnat"], {
      kind: "chain",
      name: "filter-prerouting-pre-dnat",
      type: "filter",
      hook: "prerouting",
      priority: -110,
    });
    assert.equal(chains.length, 8);
    assert.equal(parsePriority("srcnat"), 100);
    assert.equal(parsePriority("filter + 5"), 5);
    assert.equal(parsePriority("-110"), -110);
    assert.equal(parsePriority("sideways"), undefined);
  });

  test("nft's words are put back into the renderer's", () => {
    assert.equal(
      rendererRule(
        "meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random",
      ),
      "mark and 0x00004000 != 0 mark set mark xor 0x00004000 masquerade fully-random",
    );
    assert.equal(
      rendererRule(
        "meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.0.0.1 . 80, 1 : 10.0.0.2 . 80 }",
      ),
      "meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.1 . 80 , 1 : 10.0.0.2 . 80 }",
    );
    assert.equal(rendererRule('goto "service-X-ns/a/tcp/p"'), "goto service-X-ns/a/tcp/p");
    assert.equal(
      rendererRule("meta l4proto tcp dnat ip to 10.0.0.1:80"),
      "meta l4proto tcp dnat to 10.0.0.1:80",
    );
  });

  test("what it cannot read or follow is named, one line each", () => {
    const text = nftText
      .replace("\tchain services {\n", "\tchain services {\n\t\tmeta skuid 0 accept\n")
      .replace(
        "type filter hook forward priority filter; policy accept;",
        "type filter hook forward priority filter; policy drop;",
      );
    const live = loadRuleset({ mode: "nftables", text });
    assert.deepEqual(live.problems, [
      "chain filter-forward: policy drop (the tracer treats every base chain as policy accept)",
    ]);
    if (live.mode !== "nftables") return;
    const r = tracePacket(live.nft, [NODE.ip], { sourceIP: POD_IP, destIP: "10.96.0.50", destPort: 80 });
    assert.deepEqual(r.errors, ["unknown verdict: meta skuid 0 accept"]);
  });

  test("a listing that is not one is refused in one line", () => {
    assert.throws(
      () => parseNftListing("Error: No such file or directory"),
      /^Error: not an nft table listing/,
    );
  });
});

describe("iptables-save", () => {
  test("every packet is traced the same through the saved tables as through the rendered ones", () => {
    const live = loaded("iptables");
    if (live.mode !== "iptables") return assert.fail("iptables expected");
    assert.deepEqual(live.problems, []);
    const rendered = renderedIPTables();
    for (const p of packets) {
      const got = traceIPTablesPacket(live.ipt, [NODE.ip], p);
      assert.deepEqual(got.errors, [], JSON.stringify(p));
      assert.deepEqual(summary(got), summary(traceIPTablesPacket(rendered, [NODE.ip], p)), JSON.stringify(p));
    }
  });

  test("only filter and nat are kept; a rule whose target is no chain and no known target is named", () => {
    const text = `*raw\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j CT --notrack\nCOMMIT\n${iptText.replace(
      "-A KUBE-MARK-MASQ",
      "-A POSTROUTING -p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu\n-A KUBE-MARK-MASQ",
    )}`;
    const saved = savedTables(text);
    assert.doesNotMatch(saved.restore, /\*raw|TCPMSS/);
    assert.deepEqual(saved.skipped, [
      "nat: -A POSTROUTING -p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu (target TCPMSS is not followed)",
    ]);
  });

  test("a rule the tracer cannot read is named with its arguments", () => {
    const text = iptText.replace(
      "-A POSTROUTING -m comment",
      "-A POSTROUTING -s 10.244.0.0/16 ! -o cbr0 -j MASQUERADE\n-A POSTROUTING -m comment",
    );
    const live = loadRuleset({ mode: "iptables", text });
    if (live.mode !== "iptables") return assert.fail("iptables expected");
    const r = traceIPTablesPacket(live.ipt, [NODE.ip], {
      sourceIP: POD_IP,
      destIP: "10.96.0.50",
      destPort: 80,
    });
    assert.deepEqual(
      [...new Set(r.errors)],
      ["unknown argument -o in -s 10.244.0.0/16 ! -o cbr0 -j MASQUERADE"],
    );
  });

  test("text that is not iptables-save output is refused in one line", () => {
    assert.throws(() => savedTables("iptables: command not found\n"), /^Error: not iptables-save output/);
  });
});
