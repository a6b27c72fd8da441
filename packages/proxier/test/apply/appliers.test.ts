// The appliers against a scripted exec: the exact commands, stdin, and error handling.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  cleanupIPTablesLeftovers,
  iptablesCleanupScript,
  platformCleanup,
  tablesOfSave,
} from "../../src/apply/cleanup.js";
import { CommandNotFoundError } from "../../src/apply/exec.js";
import { detectIPTablesBackend, IptablesRestoreApplier } from "../../src/apply/iptables-restore.js";
import { type NFTRunner, NftApplier } from "../../src/apply/nft-applier.js";
import { isAlreadyExists, isNotFound } from "../../src/nftables/errors.js";
import { FakeNFTables } from "../../src/nftables/fake.js";
import { Transaction } from "../../src/nftables/transaction.js";
import { fakeExec } from "./fake-exec.js";

function tableTx(): Transaction {
  const tx = new Transaction("ip", "kube-proxy");
  tx.add({ kind: "table" });
  tx.add({ kind: "chain", name: "services" });
  return tx;
}

describe("NftApplier", () => {
  test("pipes the transaction to nft -f - and checks with --check", async () => {
    const { exec, calls } = fakeExec();
    const nft = new NftApplier({ exec });
    await nft.run(tableTx());
    await nft.check(tableTx());
    await nft.run(new Transaction("ip", "kube-proxy")); // empty: nothing to run
    assert.deepEqual(
      calls.map((c) => [c.command, ...c.args]),
      [
        ["nft", "-f", "-"],
        ["nft", "--check", "-f", "-"],
      ],
    );
    assert.equal(calls[0]?.stdin, tableTx().toString());
  });

  test("classifies nft errors and keeps the first stderr line as the message", async () => {
    const cases = [
      ["Error: Could not process rule: No such file or directory", isNotFound],
      ["Error: Could not process rule: File exists", isAlreadyExists],
    ] as const;
    for (const [text, predicate] of cases) {
      const stderr = `/dev/stdin:1:19-19: ${text}\ncreate chain ip t c\n                  ^\n`;
      const nft = new NftApplier({ exec: fakeExec(() => ({ code: 1, stderr })).exec });
      await assert.rejects(nft.run(tableTx()), (e: Error) => {
        assert.ok(predicate(e));
        assert.equal(e.message, `nftables: /dev/stdin:1:19-19: ${text}`);
        return true;
      });
    }
    const other = new NftApplier({
      exec: fakeExec(() => ({ code: 1, stderr: "Error: syntax error\n" })).exec,
    });
    await assert.rejects(
      other.run(tableTx()),
      (e: Error) => !isNotFound(e) && /syntax error/.test(e.message),
    );
  });

  test("a builder error is thrown without running nft", async () => {
    const { exec, calls } = fakeExec();
    const tx = new Transaction("ip", "kube-proxy");
    tx.add({ kind: "chain", name: "bad name!" });
    await assert.rejects(new NftApplier({ exec }).run(tx), /characters nft does not allow/);
    assert.equal(calls.length, 0);
  });

  test("listObjects reads nft's JSON; a missing table lists nothing", async () => {
    const json = JSON.stringify({
      nftables: [
        { metainfo: {} },
        { table: { name: "kube-proxy" } },
        { chain: { name: "services" } },
        { set: { name: "cluster-ips" } },
        { map: { name: "service-ips" } },
      ],
    });
    const nft = new NftApplier({ exec: fakeExec(() => ({ stdout: json })).exec });
    assert.deepEqual(await nft.listObjects("ip", "kube-proxy"), {
      chains: ["services"],
      sets: ["cluster-ips"],
    });
    const stderr = "Error: No such file or directory\nlist table ip kube-proxy\n";
    const missing = new NftApplier({ exec: fakeExec(() => ({ code: 1, stderr })).exec });
    assert.deepEqual(await missing.listObjects("ip", "kube-proxy"), { chains: [], sets: [] });
  });

  test("the fake and the real applier are interchangeable runners", async () => {
    const runners: NFTRunner[] = [
      new FakeNFTables("ip", "kube-proxy"),
      new NftApplier({ exec: fakeExec().exec }),
    ];
    for (const r of runners) await r.run(tableTx());
  });
});

describe("IptablesRestoreApplier", () => {
  test("runs the backend's restore with the xtables lock wait, --noflush and --counters", async () => {
    const { exec, calls } = fakeExec();
    const ipt = new IptablesRestoreApplier({ family: "IPv6", backend: "legacy", exec });
    await ipt.restore("*nat\nCOMMIT\n", { counters: true });
    assert.deepEqual(calls[0], {
      command: "ip6tables-legacy-restore",
      args: ["-w", "5", "-W", "100000", "--noflush", "--counters"],
      stdin: "*nat\nCOMMIT\n",
    });
  });

  test("a missing binary is a one-line error naming it; restore failures keep the first line", async () => {
    const missing = new IptablesRestoreApplier({
      family: "IPv4",
      backend: "nft",
      exec: fakeExec(() => "missing").exec,
    });
    await assert.rejects(missing.restore(""), (e: Error) => {
      assert.ok(e instanceof CommandNotFoundError);
      assert.equal(e.message, "iptables-nft-restore: command not found (is it installed and on PATH?)");
      return true;
    });
    const stderr = "iptables-restore: line 7 failed\n";
    const failing = new IptablesRestoreApplier({
      family: "IPv4",
      exec: fakeExec(() => ({ code: 1, stderr })).exec,
    });
    await assert.rejects(failing.restore("x"), /^Error: iptables-restore: iptables-restore: line 7 failed$/);
  });

  test("ensureRule checks first and only inserts when the rule is missing", async () => {
    const { exec, calls } = fakeExec((c) => ({ code: c.args.includes("-C") ? 1 : 0 }));
    const ipt = new IptablesRestoreApplier({ family: "IPv4", exec });
    await ipt.ensureRule("prepend", "nat", "PREROUTING", ["-j", "KUBE-SERVICES"]);
    assert.deepEqual(
      calls.map((c) => c.args.slice(4).join(" ")),
      ["-t nat -C PREROUTING -j KUBE-SERVICES", "-t nat -I PREROUTING -j KUBE-SERVICES"],
    );
  });

  test("backend detection follows iptables-wrapper: kubelet's chains decide, nft by default", async () => {
    const withChain = (where: string) =>
      fakeExec((c) => ({
        stdout: c.command === where ? "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n" : "",
      })).exec;
    assert.equal(await detectIPTablesBackend(withChain("iptables-nft-save")), "nft");
    assert.equal(await detectIPTablesBackend(withChain("ip6tables-legacy-save")), "legacy");
    assert.equal(await detectIPTablesBackend(fakeExec(() => "missing").exec), "nft");
    const { exec, calls } = fakeExec();
    await detectIPTablesBackend(exec);
    // iptables-legacy-save is never asked for one table: that would create the table.
    assert.deepEqual(
      calls.map((c) => [c.command, ...c.args].join(" ")),
      [
        "iptables-nft-save -t mangle",
        "ip6tables-nft-save -t mangle",
        "iptables-legacy-save",
        "ip6tables-legacy-save",
      ],
    );
  });
});

describe("cleanup", () => {
  const natSave = [
    "*nat",
    ":PREROUTING ACCEPT [0:0]",
    ":OUTPUT ACCEPT [0:0]",
    ":KUBE-SERVICES - [0:0]",
    ":KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]",
    ":KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]",
    ":CNI-HOSTPORT - [0:0]",
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    "-A OUTPUT -j CNI-HOSTPORT",
    "-A KUBE-SERVICES -d 172.30.0.41/32 -j KUBE-SVC-XPGD46QRK7WJZT7O",
    "-A KUBE-SVC-XPGD46QRK7WJZT7O -j KUBE-SEP-SXIVWICOYRO3J4NJ",
    "COMMIT",
  ].join("\n");

  test("deletes jumps into our chains, then flushes and deletes them; leaves others alone", () => {
    assert.equal(
      iptablesCleanupScript("nat", natSave),
      [
        "*nat",
        ":KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]",
        ":KUBE-SERVICES - [0:0]",
        ":KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]",
        '-D PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        "-X KUBE-SEP-SXIVWICOYRO3J4NJ",
        "-X KUBE-SERVICES",
        "-X KUBE-SVC-XPGD46QRK7WJZT7O",
        "COMMIT",
        "",
      ].join("\n"),
    );
    assert.equal(
      iptablesCleanupScript("filter", "*filter\n:INPUT ACCEPT [0:0]\n:KUBE-FIREWALL - [0:0]\nCOMMIT\n"),
      null,
    );
  });

  test("start-up cleanup removes the other modes' rules; --cleanup removes all", async () => {
    const run = async (mode: "iptables" | "nftables", all: boolean) => {
      const { exec, calls } = fakeExec((c) => (c.command.endsWith("-save") ? { stdout: natSave } : {}));
      await platformCleanup(
        { nft: new NftApplier({ exec }), iptables: [new IptablesRestoreApplier({ family: "IPv4", exec })] },
        mode,
        all,
      );
      return calls.map((c) => c.command);
    };
    assert.deepEqual(await run("iptables", false), ["nft", "nft"]);
    assert.ok(!(await run("nftables", false)).includes("nft"));
    assert.ok((await run("nftables", false)).includes("iptables-restore"));
    const all = await run("iptables", true);
    assert.ok(all.includes("iptables-restore") && all.includes("nft"));
  });

  test("reads one plain save and cleans only the tables it holds (naming one would create it in legacy)", async () => {
    const dump = `# Generated by iptables-save\n${natSave}\n*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n`;
    assert.deepEqual([...tablesOfSave(dump).keys()], ["nat", "filter"]);
    assert.equal(tablesOfSave(dump).get("nat"), `${natSave}\n`);
    const { exec, calls } = fakeExec((c) => (c.command.endsWith("-save") ? { stdout: dump } : {}));
    await cleanupIPTablesLeftovers(new IptablesRestoreApplier({ family: "IPv4", backend: "legacy", exec }));
    assert.deepEqual(
      calls.map((c) => [c.command, ...c.args].join(" ")),
      ["iptables-legacy-save", "iptables-legacy-restore -w 5 -W 100000 --noflush"],
    );
  });

  test("a missing binary is skipped; other failures are collected", async () => {
    const missing = fakeExec(() => "missing").exec;
    await platformCleanup({ nft: new NftApplier({ exec: missing }) }, "iptables");
    const failing = fakeExec(() => ({ code: 1, stderr: "Error: Operation not permitted\n" })).exec;
    await assert.rejects(
      platformCleanup({ nft: new NftApplier({ exec: failing }) }, "iptables"),
      (e: AggregateError) => e.errors.length === 1 && /Operation not permitted/.test(String(e.errors[0])),
    );
  });
});
