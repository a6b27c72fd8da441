// The netlink writer against `nft -f`, in the kernel: the same transactions go to one namespace
// through `nft` and to another through NetlinkNftApplier, and after every step both tables must be
// the same, as `nft list` prints them and attribute by attribute as the kernel dumps them (only
// the anonymous sets' names may differ). Then what the writer does when the kernel refuses a batch,
// when a rule is outside what it translates, and when netlink cannot be opened.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { inNetns, realExec } from "../../src/apply/exec.js";
import { NetlinkNftApplier, NetlinkNftError } from "../../src/apply/netlink-applier.js";
import { NftApplier } from "../../src/apply/nft-applier.js";
import { newNftRunner, nftWriterFromEnv } from "../../src/apply/nft-runner.js";
import { isNotFound } from "../../src/nftables/errors.js";
import type { NFTablesOptions } from "../../src/nftables/options.js";
import { type NFTablesState, renderNFTables } from "../../src/nftables/render.js";
import { Transaction } from "../../src/nftables/transaction.js";
import { buildMaps, nftOptions } from "../../src/testing/fixtures.js";
import { goldenNFTablesFullSync, goldenServices, goldenSlices } from "../golden-cluster.js";
import { dualServices, dualSlices } from "../golden-dual.js";
import { tableState } from "../netlink-state.js";
import { lineDiff } from "../nft-helpers.js";
import { canonicalNFTList } from "../nft-list.js";
import * as H from "../upstream-harness.js";
import { kernelTestsUnavailable } from "./topology.js";

const skip = await kernelTestsUnavailable(["nft"]);
if (skip) console.log(`# skipping netlink writer kernel tests: ${skip}`);

type Family = "ip" | "ip6";

/** Two fresh namespaces, one written by `nft -f`, one by the netlink writer. */
class Pair {
  readonly viaNft: string;
  readonly viaNetlink: string;
  readonly writer: NetlinkNftApplier;
  readonly staged: boolean;
  constructor(label: string, staging?: { minChains: number; chainsPerStage: number }) {
    this.staged = staging !== undefined;
    this.viaNft = `sy-nlw-n-${label}-${process.pid}`;
    this.viaNetlink = `sy-nlw-l-${label}-${process.pid}`;
    for (const ns of [this.viaNft, this.viaNetlink]) {
      H.deleteNetns(ns);
      H.createNetns(ns);
    }
    this.writer = new NetlinkNftApplier({
      netns: this.viaNetlink,
      writer: "netlink",
      ...(staging && { staging }),
    });
  }

  async apply(tx: Transaction | null): Promise<void> {
    if (!tx || tx.size === 0) return;
    H.inNetns(this.viaNft, ["nft", "-f", "-"], tx.script());
    await this.writer.run(tx);
  }

  /**
   * Both tables, listed by nft and dumped over netlink, must be equal. A staged writer creates
   * chains in another order, which shows only in the order of the dump and in the handles rules
   * carry as their position (the previous rule's handle): those are left out of its comparison.
   */
  async assertSame(family: Family, table: string, step: string): Promise<void> {
    const orderFree = (lines: string[]) =>
      this.staged ? lines.map((l) => l.replace(/^(rule \S+ \S+) 6=[0-9a-f]+/, "$1")).sort() : lines;
    const list = (ns: string) => canonicalNFTList(H.inNetns(ns, ["nft", "list", "table", family, table]));
    const [byNft, byNetlink] = [list(this.viaNft), list(this.viaNetlink)];
    if (byNft.join("\n") !== byNetlink.join("\n"))
      assert.fail(`${step}: nft list differs (- nft, + netlink):\n${diffOnly(byNft, byNetlink)}`);
    const [a, b] = [
      orderFree(await tableState(this.viaNft, family, table)),
      orderFree(await tableState(this.viaNetlink, family, table)),
    ];
    assert.ok(a.length > 3, `${step}: the table is not empty`);
    if (a.join("\n") !== b.join("\n"))
      assert.fail(`${step}: kernel state differs (- nft, + netlink):\n${diffOnly(a, b)}`);
  }

  close(): void {
    this.writer.close();
    H.deleteNetns(this.viaNft);
    H.deleteNetns(this.viaNetlink);
  }
}

function diffOnly(a: string[], b: string[]): string {
  return lineDiff(a.join("\n").split("\n"), b.join("\n").split("\n"))
    .split("\n")
    .filter((l) => !l.startsWith("  "))
    .join("\n")
    .slice(0, 6000);
}

/** A full sync, a partial one (one Service's endpoints, one Service gone), and the cleanup after. */
async function syncHistory(pair: Pair, options: NFTablesOptions, family: "IPv4" | "IPv6", label: string) {
  const v4 = family === "IPv4";
  const services = v4
    ? goldenServices((n) => `172.30.0.${n}`)
    : dualServices(
        (n) => `172.30.0.${n}`,
        (n) => `fd00:172:30::${n}`,
      );
  const slices = v4 ? goldenSlices() : dualSlices();
  const table = v4 ? "ip" : "ip6";
  const full = renderNFTables(options, { ...buildMaps(family, services, slices), now: 0 });
  await pair.apply(full.transaction);
  await pair.assertSame(table, "kube-proxy", `${label}: full sync`);

  // svc5 (affinity, two endpoints) keeps one; svc2 goes away
  const fewer = services.filter((s) => s.metadata?.name !== "svc2");
  const changedSlices = slices.map((s) =>
    s.metadata?.labels?.["kubernetes.io/service-name"] === "svc5"
      ? { ...s, endpoints: s.endpoints.slice(0, 1) }
      : s,
  );
  const partial = renderNFTables(
    options,
    {
      ...buildMaps(family, fewer, changedSlices),
      changedServices: new Set(["ns5/svc5", "ns2/svc2"]),
      now: 10,
    },
    full.state,
  );
  assert.equal(partial.fullSync, false);
  await pair.apply(partial.cleanup);
  await pair.apply(partial.transaction);
  await pair.assertSame(table, "kube-proxy", `${label}: partial sync`);
  const later: NFTablesState = partial.state;
  const cleanup = renderNFTables(
    options,
    { ...buildMaps(family, fewer, changedSlices), changedServices: new Set(), now: 2000 },
    later,
  );
  assert.ok(cleanup.cleanup, "stale chains are deleted a second later");
  await pair.apply(cleanup.cleanup);
  await pair.apply(cleanup.transaction);
  await pair.assertSame(table, "kube-proxy", `${label}: cleanup`);
}

/** Rule forms beyond the golden cluster's: prefixes of every kind, sets of addresses and ranges. */
const RULES: Record<Family, readonly string[]> = {
  ip: [
    "iifname != cbr0 mark set mark or 0x00004000",
    "iifname veth* goto d",
    "ip daddr { 172.30.0.0/16,10.0.0.0/8 } drop",
    "ip saddr != { 203.0.113.0/25 , 1.2.3.4 } drop",
    "ip saddr != { 0.0.0.0/0 } drop",
    "ip saddr != { 10.1.2.3/32 } drop",
    "ip saddr 10.0.0.0/9 goto d",
    "ip saddr != 0.0.0.0/0 goto d",
    "ip saddr != { 1.2.3.0/24, 1.2.4.0/24, 5.6.7.8 } drop",
    "ip saddr != { 1.2.3.4, 5.6.7.8 } drop",
    "ip saddr != { 1.2.3.4/32, 5.6.7.8/32 } drop",
    "ip saddr != { 0.0.0.0/1, 128.0.0.0/1 } drop",
    "ip saddr != { 1.0.0.0/8, 128.0.0.0/1 } drop",
    "ip saddr != { 255.255.255.255, 1.2.3.4/31 } drop",
    "ip daddr 10.1.2.3/23 drop",
    "meta l4proto sctp dnat to 10.1.2.3:80",
    "meta l4proto udp dnat ip addr . port to numgen random mod 1 map { 0 : 10.1.1.1 . 53 }",
    "numgen random mod 3 vmap { 0 : goto d , 1 : jump d , 2 : goto d }",
  ],
  ip6: [
    "ip6 daddr { fd00:172:30::/108,fd00:10::/32 } drop",
    "ip6 saddr != { fd00:203:113::/64 , fd00:1:2:3::4 } drop",
    "meta l4proto tcp dnat ip6 addr . port to numgen random mod 2 map { 0 : fd00:10:180::1 . 80 , 1 : fd00:10:180::2 . 80 }",
    "meta l4proto tcp dnat to [fd00:10:180::1]:80",
    "ip6 saddr fd00:10::/33 goto d",
    "ip6 daddr != ::1 goto d",
    "ip6 saddr != { ::/1, 8000::/1 } drop",
    "ip6 saddr { fd00::1, fd00::2 } drop",
    "ip6 saddr ::ffff:1.2.3.4 drop",
    "reject",
  ],
};

function rulesTransaction(family: Family): Transaction {
  const tx = new Transaction(family, "t");
  tx.add({ kind: "table" });
  tx.add({ kind: "chain", name: "c" });
  tx.add({ kind: "chain", name: "d" });
  RULES[family].forEach((rule, i) => {
    tx.add({ kind: "rule", chain: "c", rule, comment: i % 2 ? `rule ${i}` : undefined });
  });
  return tx;
}

describe("nftables over netlink, against nft -f", { skip: skip ?? false }, () => {
  const pairs: Pair[] = [];
  const pair = (label: string, staging?: { minChains: number; chainsPerStage: number }) => {
    const p = new Pair(label, staging);
    pairs.push(p);
    return p;
  };
  after(() => {
    for (const p of pairs) p.close();
  });

  const variants: [string, Partial<NFTablesOptions>][] = [
    ["defaults", {}],
    ["all-nodeports", { nodePortAddresses: "all", masqueradeAll: true }],
    [
      "bridge",
      {
        localDetector: { mode: "BridgeInterface", interfaceName: "cbr0" },
        serviceCIDRs: ["172.30.0.0/16", "10.96.0.0/12"],
      },
    ],
    ["prefix", { localDetector: { mode: "InterfaceNamePrefix", prefix: "veth" } }],
    ["none", { localDetector: { mode: "none" }, serviceCIDRs: [] }],
  ];
  for (const [label, extra] of variants) {
    test(`IPv4 golden cluster (${label}): full sync, partial sync, cleanup`, async () => {
      await syncHistory(pair(`4${label.slice(0, 3)}`), nftOptions("IPv4", extra), "IPv4", label);
    });
  }

  // Staging (new chains ahead of the last transaction) starts at hundreds of chains; forced here.
  const staging = { minChains: 1, chainsPerStage: 2 };
  test("IPv4 golden cluster, full sync staged two chains at a time: the same table", async () => {
    const p = pair("4stg", staging);
    await syncHistory(p, nftOptions("IPv4"), "IPv4", "staged");
    assert.equal(p.writer.stats.staged, 1, "the full sync was staged, the partial syncs not");
  });

  test("a staged full sync refused in its last transaction takes the staged chains back out", async () => {
    const p = pair("stgno", staging);
    await p.apply(rulesTransaction("ip"));
    const before = await tableState(p.viaNetlink, "ip", "t");
    const bad = new Transaction("ip", "t");
    bad.add({ kind: "table" });
    for (const c of ["x1", "x2", "x3"]) {
      bad.add({ kind: "chain", name: c });
      bad.add({
        kind: "rule",
        chain: c,
        rule: "meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.0.0.1 . 80 , 1 : 10.0.0.2 . 80 }",
      });
    }
    bad.add({ kind: "rule", chain: "c", rule: "goto missing" });
    await assert.rejects(p.writer.run(bad), /No such file or directory: add rule ip t c goto missing/);
    assert.equal(p.writer.stats.staged, 2);
    assert.deepEqual(await tableState(p.viaNetlink, "ip", "t"), before);
  });

  test("IPv6 golden cluster: full sync, partial sync, cleanup", async () => {
    await syncHistory(pair("6"), nftOptions("IPv6"), "IPv6", "IPv6");
  });

  for (const family of ["ip", "ip6"] as const) {
    test(`rule forms beyond the golden cluster's (${family})`, async () => {
      const p = pair(`r${family}`);
      await p.apply(rulesTransaction(family));
      await p.assertSame(family, "t", `${family} rules`);
      assert.deepEqual(p.writer.stats, { netlink: 1, fallback: 0, staged: 0 });
    });
  }

  test("anonymous sets get short names of their own, never nft's __set%d, numbered past the table's", async () => {
    const p = pair("names");
    await p.apply(rulesTransaction("ip"));
    const names = (ns: string) =>
      H.inNetns(ns, ["nft", "--debug=netlink", "list", "chain", "ip", "t", "c"])
        .split("\n")
        .flatMap((l) => /lookup reg 1 set (\S+)/.exec(l)?.[1] ?? []);
    assert.ok(
      names(p.viaNft).every((n) => /^__(set|map)\d+$/.test(n)),
      names(p.viaNft).join(" "),
    );
    const ours = names(p.viaNetlink);
    assert.ok(ours.length >= 10 && ours.every((n) => /^_[sm][0-9a-z]+$/.test(n)), ours.join(" "));
    assert.equal(new Set(ours).size, ours.length);
    // a new writer (a restarted proxy) numbers past what the table holds, even while rewriting it
    const again = new NetlinkNftApplier({ netns: p.viaNetlink, writer: "netlink" });
    const rewrite = new Transaction("ip", "t");
    rewrite.add({ kind: "rule", chain: "d", rule: "numgen random mod 2 vmap { 0 : goto c , 1 : goto c }" });
    await again.run(rewrite);
    again.close();
    const next = H.inNetns(p.viaNetlink, ["nft", "--debug=netlink", "list", "chain", "ip", "t", "d"]);
    const name = /lookup reg 1 set (\S+)/.exec(next)?.[1] ?? "";
    const highest = Math.max(...ours.map((n) => Number.parseInt(n.slice(2), 36)));
    assert.ok(Number.parseInt(name.slice(2), 36) > highest, `${name} after ${ours.join(" ")}`);
  });

  test("a refused batch changes nothing and says what was refused", async () => {
    const p = pair("refused");
    await p.apply(rulesTransaction("ip"));
    const before = await tableState(p.viaNetlink, "ip", "t");
    const bad = new Transaction("ip", "t");
    bad.add({ kind: "chain", name: "e" });
    bad.add({ kind: "rule", chain: "e", rule: "ip daddr { 10.0.0.0/8, 11.0.0.0/8 } drop" });
    bad.add({ kind: "rule", chain: "c", rule: "goto missing" });
    await assert.rejects(p.writer.run(bad), (err: unknown) => {
      assert.ok(err instanceof NetlinkNftError && isNotFound(err), String(err));
      assert.match(String(err), /No such file or directory: add rule ip t c goto missing/);
      return true;
    });
    assert.deepEqual(await tableState(p.viaNetlink, "ip", "t"), before);
    // check() validates without applying, like nft --check
    const fine = new Transaction("ip", "t");
    fine.add({ kind: "chain", name: "f" });
    await p.writer.check(fine);
    await assert.rejects(p.writer.check(bad), NetlinkNftError);
    assert.deepEqual(await tableState(p.viaNetlink, "ip", "t"), before);
  });

  test("a rule outside what the writer translates goes to nft, and the table is the same", async () => {
    const p = pair("fallback");
    const tx = rulesTransaction("ip");
    tx.add({ kind: "rule", chain: "c", rule: "tcp dport 22 accept" });
    const writer = new NetlinkNftApplier({ netns: p.viaNetlink, exec: inNetns(p.viaNetlink, realExec) });
    H.inNetns(p.viaNft, ["nft", "-f", "-"], tx.script());
    await writer.run(tx);
    writer.close();
    assert.deepEqual(writer.stats, { netlink: 0, fallback: 1, staged: 0 });
    await p.assertSame("ip", "t", "fallback");
  });

  test("without netlink (no such namespace here) auto uses nft; netlink alone refuses", async () => {
    const p = pair("auto");
    const exec = inNetns(p.viaNetlink, realExec);
    const auto = newNftRunner({ exec });
    assert.ok(auto instanceof NetlinkNftApplier);
    const missing = new NetlinkNftApplier({ netns: `sy-nlw-missing-${process.pid}`, exec });
    await missing.run(rulesTransaction("ip"));
    assert.deepEqual(missing.stats, { netlink: 0, fallback: 1, staged: 0 });
    H.inNetns(p.viaNft, ["nft", "-f", "-"], rulesTransaction("ip").script());
    await p.assertSame("ip", "t", "auto without netlink");
    const strict = new NetlinkNftApplier({ netns: `sy-nlw-missing-${process.pid}`, writer: "netlink" });
    await assert.rejects(strict.run(rulesTransaction("ip")), /cannot open \/run\/netns/);
    assert.ok(newNftRunner({ exec, writer: "nft" }) instanceof NftApplier);
    assert.equal(nftWriterFromEnv({}), "auto");
    assert.throws(() => nftWriterFromEnv({ SWITCHYARD_PROXY_NFT_WRITER: "kernel" }), /want "auto"/);
  });

  test("lists a table's chains and named sets as nft does", async () => {
    const p = pair("list");
    const r = goldenNFTablesFullSync();
    await p.apply(r.transaction);
    const byNft = await new NftApplier({ exec: inNetns(p.viaNft, realExec) }).listObjects("ip", "kube-proxy");
    const byNetlink = await p.writer.listObjects("ip", "kube-proxy");
    assert.deepEqual(
      { chains: [...byNetlink.chains].sort(), sets: [...byNetlink.sets].sort() },
      { chains: [...byNft.chains].sort(), sets: [...byNft.sets].sort() },
    );
    assert.deepEqual(await p.writer.listObjects("ip", "no-such-table"), { chains: [], sets: [] });
  });
});
