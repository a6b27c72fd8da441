import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { main } from "../../src/cli/main.js";
import { readLabRuntime } from "../../src/netns/state.js";

const dir = mkdtempSync(join(tmpdir(), "kind-cli-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI and returns its exit code and what it printed on stderr. */
async function run(args: string[]): Promise<{ code: number; stderr: string }> {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...a: unknown[]) => lines.push(a.join(" "));
  try {
    return { code: await main(args), stderr: lines.join("\n") };
  } finally {
    console.error = original;
  }
}

function labFile(content: object) {
  writeFileSync(join(dir, "lab.json"), JSON.stringify(content));
}

describe("the lab's runtime in lab.json", () => {
  test("recorded runtime, and netns for files written before it was recorded", () => {
    labFile({ runtime: "kind" });
    assert.equal(readLabRuntime(dir), "kind");
    labFile({ plan: {} });
    assert.equal(readLabRuntime(dir), "netns");
    assert.equal(readLabRuntime(join(dir, "none")), undefined);
  });

  test("up --runtime kind refuses a folder holding a netns lab (its down would orphan it)", async () => {
    labFile({ runtime: "netns" });
    const r = await run(["up", "--runtime", "kind", "--state-dir", dir]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^switchyard-lab: a netns lab is up in .*; run switchyard-lab down first/);
  });

  test("migrate on a kind lab: one line when it is not up, or runs upstream's stack", async () => {
    labFile({ runtime: "kind" });
    const migrate = () => run(["migrate", "--to", "nftables", "--all", "--state-dir", dir]);
    assert.deepEqual(await migrate(), {
      code: 1,
      stderr: `switchyard-lab: no kind lab is up in ${dir} (its up did not finish); run switchyard-lab up --runtime kind`,
    });
    labFile({
      runtime: "kind",
      server: "https://127.0.0.1:1",
      stack: { kind: "upstream", proxyMode: "iptables" },
    });
    assert.equal(
      (await migrate()).stderr,
      "switchyard-lab: migrate needs Switchyard's stack; this lab runs upstream's (up --stack upstream)",
    );
  });

  test("migrate and scenarios on a netns lab without Switchyard's stack: one line each", async () => {
    const netns = { runtime: "netns", server: "https://127.0.0.1:1", plan: { nodeList: [] } };
    const migrate = () => run(["migrate", "--to", "nftables", "--all", "--state-dir", dir]);
    const scenario = () => run(["scenario", "lameduck", "--state-dir", dir]);
    labFile({ ...netns, stack: { kind: "upstream", proxyMode: "iptables" } });
    const upstream = "this lab runs upstream's (up --stack upstream)";
    assert.equal((await migrate()).stderr, `switchyard-lab: migrate needs Switchyard's stack; ${upstream}`);
    assert.equal((await scenario()).stderr, `switchyard-lab: scenario needs Switchyard's stack; ${upstream}`);
    labFile(netns);
    const none = "this lab runs none (up --no-stack)";
    assert.equal((await migrate()).stderr, `switchyard-lab: migrate needs Switchyard's stack; ${none}`);
    assert.equal((await scenario()).stderr, `switchyard-lab: scenario needs Switchyard's stack; ${none}`);
  });

  test("a scenario on a kind lab: one line when it is not up, runs no stack, or runs upstream's", async () => {
    const scenario = () => run(["scenario", "lameduck", "--state-dir", dir]);
    labFile({ runtime: "kind" });
    assert.deepEqual(await scenario(), {
      code: 1,
      stderr: `switchyard-lab: no kind lab is up in ${dir} (its up did not finish); run switchyard-lab up --runtime kind`,
    });
    labFile({ runtime: "kind", server: "https://127.0.0.1:1" });
    assert.equal(
      (await scenario()).stderr,
      "switchyard-lab: scenario needs Switchyard's stack; this lab runs none (up --no-stack)",
    );
    labFile({
      runtime: "kind",
      server: "https://127.0.0.1:1",
      stack: { kind: "upstream", proxyMode: "iptables" },
    });
    assert.equal(
      (await scenario()).stderr,
      "switchyard-lab: scenario needs Switchyard's stack; this lab runs upstream's (up --stack upstream)",
    );
  });

  test("flags of the other runtime are usage errors", async () => {
    const r = await run([
      "up",
      "--runtime",
      "netns",
      "--node-image",
      "kindest/node:v1.37.2",
      "--state-dir",
      dir,
    ]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      "switchyard-lab: up: --node-image does not apply to the netns runtime\n" +
        "Usage: switchyard-lab up [flags] (switchyard-lab up --help for more)",
    );
  });

  test("--ip-family applies to kind: its ranges are checked against it before anything starts", async () => {
    const fresh = join(dir, "dual");
    const r = await run(
      ["up", "--runtime", "kind", "--ip-family", "dual", "--cluster-cidr", "10.244.0.0/16"].concat([
        "--state-dir",
        fresh,
      ]),
    );
    assert.deepEqual(r, {
      code: 1,
      stderr:
        "switchyard-lab: --cluster-cidr 10.244.0.0/16: --ip-family dual wants an IPv4 and an IPv6 range, comma-separated, IPv4 first",
    });
  });

  test("--stack: one of two, and not beside --no-stack", async () => {
    const up = (...flags: string[]) => run(["up", "--runtime", "netns", "--state-dir", dir, ...flags]);
    const usage = "Usage: switchyard-lab up [flags] (switchyard-lab up --help for more)";
    assert.deepEqual(await up("--stack", "kubeadm"), {
      code: 2,
      stderr: `switchyard-lab: up: --stack must be switchyard or upstream, got "kubeadm"\n${usage}`,
    });
    assert.equal(
      (await up("--stack", "upstream", "--no-stack")).stderr,
      `switchyard-lab: up: --stack and --no-stack contradict each other; give one\n${usage}`,
    );
  });
});
