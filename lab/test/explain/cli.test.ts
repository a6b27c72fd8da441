// explain and trace as commands, before they reach a lab: help, and one-line errors for what was mistyped.
// (Unknown flags with suggestions, and completion of their flags: test/cli/looking-inside.test.ts.)
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runMain } from "../cli/harness.js";

/** The first line on stderr, when the command line was refused as a usage mistake (exit 2). */
async function refused(args: string[]): Promise<string> {
  const r = await runMain(args);
  assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
  assert.equal(r.stdout, "");
  return r.stderr.split("\n")[0] ?? "";
}

describe("explain and trace on the command line", () => {
  test("--help prints the help, each flag with its default, and exits 0", async () => {
    const explain = await runMain(["explain", "--help"]);
    assert.equal(explain.code, 0);
    assert.match(explain.stdout, /^Walks a new connection through one node's live proxy rules/);
    assert.match(
      explain.stdout,
      /\n {2}switchyard-lab explain --from POD\|IP --to SERVICE\|IP:PORT \[flags\]\n/,
    );
    assert.match(explain.stdout, /--proto tcp\|udp +the protocol \(default the Service port's, else tcp\)/);
    const trace = await runMain(["trace", "-h"]);
    assert.equal(trace.code, 0);
    assert.match(trace.stdout, /\n {2}switchyard-lab trace SERVICE \[flags\]\n/);
    assert.match(trace.stdout, /--changes N +how many changes to follow \(default 4\)/);
    assert.match(trace.stdout, /--watch +follow changes made by others instead of making them\n/);
  });

  test("mistakes are usage errors saying what", async () => {
    assert.equal(
      await refused(["explain", "--from", "client"]),
      "switchyard-lab: explain: --from and --to are required",
    );
    assert.equal(
      await refused(["explain", "--from", "a", "--to", "b", "--proto", "sctp-over-udp"]),
      'switchyard-lab: explain: --proto must be tcp or udp, got "sctp-over-udp"',
    );
    assert.equal(
      await refused(["explain", "--from", "a", "--to", "b", "--proto", "tpc"]),
      'switchyard-lab: explain: --proto must be tcp or udp, got "tpc"; did you mean "tcp"?',
    );
    assert.match(await refused(["explain", "--from", "a", "--to", "10.96.0.1"]), /an address needs a port/);
    assert.match(
      await refused(["explain", "--from", "a b", "--to", "echo"]),
      /^switchyard-lab: explain: --from a b: neither/,
    );
    assert.match(await refused(["trace"]), /^switchyard-lab: trace: missing SERVICE \(the Service: NAME/);
    assert.equal(
      await refused(["trace", "echo", "--changes", "0"]),
      'switchyard-lab: trace: --changes must be a positive integer, got "0"',
    );
    assert.equal(
      await refused(["trace", "echo", "--wait", "1.5"]),
      'switchyard-lab: trace: --wait must be a positive integer, got "1.5"',
    );
    assert.equal(
      await refused(["trace", "10.96.0.1:80"]),
      "switchyard-lab: trace: 10.96.0.1:80 is an address; name the Service",
    );
    assert.match(
      await refused(["trace", "echo", "other"]),
      /^switchyard-lab: trace: unexpected argument "other"/,
    );
  });

  test("without a lab: one line saying so, exit 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-nolab-"));
    const explain = await runMain(["explain", "--from", "a", "--to", "b", "--state-dir", dir]);
    assert.deepEqual(explain, {
      code: 1,
      stdout: "",
      stderr: `switchyard-lab: explain: no lab in ${dir}; run switchyard-lab up\n`,
    });
    const trace = await runMain(["trace", "echo", "--state-dir", dir]);
    assert.deepEqual(trace, {
      code: 1,
      stdout: "",
      stderr: `switchyard-lab: trace: no lab in ${dir}; run switchyard-lab up\n`,
    });
  });
});
