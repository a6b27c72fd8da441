import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { labDown } from "../../src/netns/lab-down.js";
import type { Scenario } from "../../src/scenarios/kit/scenario.js";
import { lameduck } from "../../src/scenarios/lameduck/lameduck.js";
import { proxyDown } from "../../src/scenarios/proxy-down/proxy-down.js";
import { scale } from "../../src/scenarios/scale/scale.js";
import { stackLabSkip, upTestLab } from "../netns/test-lab.js";
import { finding, runScenario } from "./harness.js";

// Its own prefix and networks, so other labs on this host are left alone.
const lab = { prefix: "scp", nodes: 3, zones: 2, nodeCidr: "198.18.16.0/24", clusterCidr: "10.251.0.0/16" };
const missingTools = ["nft", "iptables-nft-save", "dig", "curl", "conntrack", "stdbuf"].filter((t) => {
  try {
    execFileSync("which", [t], { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
});
const skip =
  stackLabSkip() ?? (missingTools.length > 0 ? `missing tools: ${missingTools.join(", ")}` : undefined);

const sh = (argv: string[]) => execFileSync(argv[0] ?? "", argv.slice(1), { encoding: "utf8" });
describe("proxy and DNS scenarios (lameduck, scale, proxy-down)", { skip }, () => {
  let dir: string;
  const run = async (s: Scenario, params: Record<string, string>) => {
    const report = await runScenario(dir, s, params);
    assert.ok(!report.lines.includes("NOT RESTORED:"), "everything the scenario changed was restored");
    return report;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-scp-"));
    const state = await upTestLab(dir, lab, { stack: "iptables", readyTimeoutMs: 300_000 });
    console.log(`# lab with the stack up in ${state.upSeconds?.toFixed(1)}s`);
  });

  after(async () => {
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("lameduck: with 5s no lookup fails in any roll; with 0s some go to the exited pod; propagation is measured", async () => {
    const rolls = 2;
    // Traced (conntrack -E on every node), so a failure lists the entry its lookup met and when its answer came.
    const trace = join(dir, "conntrack-trace");
    const r = await run(lameduck, { lameducks: "0s,5s", settle: "2", rolls: String(rolls), trace });
    const f = finding(r, "C16");
    assert.equal(f.verdict, "holds", `${f.measured}; ${f.note}`);
    // Every measured roll has its row: the 5s ones must have lost nothing. A lookup the rules sent to the old pod
    // while it drained is answered; one whose new socket got the port of a standing conntrack entry to a pod past
    // its lameduck was lost until the proxy removed answered entries to terminating endpoints it no longer uses
    // (deleted at first, which lost a lookup whose answer was on its way through one; now they expire in a second).
    const rows = r.lines
      .map((l) => /^(\d+m?s) +(\d+)\/(\d+) +(\d+)ms/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null);
    const fives = rows.filter((m) => m[1] === "5s");
    assert.equal(fives.length, rolls, `one row per measured 5s roll: ${r.lines.join("\n")}`);
    for (const m of fives) {
      assert.ok(Number(m[3]) > 0, "lookups were made");
      assert.ok(Number(m[4]) > 0, "a propagation time was measured");
      assert.equal(Number(m[2]), 0, `no lookup failed in a 5s roll: ${r.lines.join("\n")}`);
    }
    console.log(`# lameduck 5s: ${fives.map((m) => `${m[2]}/${m[3]}`).join(", ")} lookups failed per roll`);
    // With 0s the pod exits at once, and the rules still send to it until they catch up: lameduck's case.
    const zero = /lameduck 0s: (\d+)\/(\d+) lookups failed/.exec(f.measured);
    assert.ok(zero && Number(zero[1]) > 0, "lameduck 0s loses lookups to the exited pod");
    const placed = /sent to a pod past its lameduck, by that node's rules of the moment: (\d+)/;
    const zeroBlock = r.lines.slice(r.lines.findIndex((l) => l.startsWith("lameduck 0s:")));
    assert.ok(
      Number(placed.exec(zeroBlock.join("\n"))?.[1] ?? 0) > 0,
      `with 0s, failures are placed on the exited pod (the count can see them): ${zeroBlock.join("\n")}`,
    );
  });

  test("scale at 50 Services: both modes measured, the numgen rule shown, the bad transaction rejected", async () => {
    const r = await run(scale, { services: "50", partials: "2", connects: "20" });
    for (const c of ["C19", "C20", "C4", "C21", "C22", "C23"])
      assert.notEqual(finding(r, c).verdict, "not measured", c);
    assert.equal(finding(r, "C22").verdict, "holds");
    assert.match(finding(r, "C21").measured, /numgen random mod \d+/);
    assert.equal(finding(r, "C14").verdict, "not measured");
    const table = r.lines.filter((l) => /^50 +(iptables|nftables) /.test(l));
    assert.equal(table.length, 2, "one row per mode");
    for (const row of table) assert.doesNotMatch(row, /no first sync|no result/);
  });

  test("proxy-down: the installed rules keep working, updates stop and resume; minSyncPeriod 1s batches", async () => {
    const r = await run(proxyDown, { pods: "20", down: "5", tries: "3", minSyncPeriods: "1ms,1s" });
    const text = r.lines.join("\n");
    const late = /Service created meanwhile: (\d+)\/(\d+) connections answered from \S+, (\d+)\//.exec(text);
    assert.ok(late, text);
    assert.equal(Number(late[1]), 0, "the new Service is unreachable from the node without a proxy");
    assert.ok(Number(late[3]) > 0, "the new Service answers from the other nodes");
    assert.match(text, /still in node-1's rules: yes; in the other nodes' rules: no/);
    const back = /then (\d+)\/(\d+) answered/.exec(text);
    assert.ok(back && Number(back[1]) === Number(back[2]), "the new Service answers once the proxy is back");
    // DNS keeps answering on the installed rules: a proxy gone would fail every lookup through the ClusterIP. A
    // rare lookup lost as the proxy's pod goes (2 of 66 in one of two runs on 2026-12-01) is the loss #17 is about,
    // not the claim's "DNS fails first", so a few are allowed and printed.
    const lookups = /lookups from it: (\d+)\/(\d+) failed/.exec(finding(r, "C17").measured);
    assert.ok(lookups, finding(r, "C17").measured);
    const [failed, tried] = [Number(lookups[1]), Number(lookups[2])];
    if (failed > 0) console.log(`# C17: ${failed}/${tried} lookups lost while node-1's proxy was gone`);
    assert.ok(tried > 0 && failed <= tried * 0.05, `at most 5% of lookups lost: ${failed}/${tried}`);
    const syncs = (p: string) =>
      Number(new RegExp(`minSyncPeriod ${p}: (\\d+) syncs`).exec(finding(r, "C15").measured)?.[1]);
    assert.ok(syncs("1s") < syncs("1ms"), `fewer rewrites with 1s: ${finding(r, "C15").measured}`);
  });

  test("down leaves nothing of the lab", async () => {
    await labDown(dir);
    assert.ok(!sh(["ip", "netns", "list"]).includes(`${lab.prefix}-`), "no namespace left");
  });
});
