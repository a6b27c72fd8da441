import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { scenarioParams } from "../../src/cli/scenario-cmd.js";
import { UsageError } from "../../src/cli/usage.js";
import { scenarioByName, scenarios } from "../../src/scenarios/index.js";
import { numberParam, type ScenarioContext } from "../../src/scenarios/kit/scenario.js";
import { runMain } from "./harness.js";

const churn = scenarioByName("slice-churn");

describe("scenario parameters", () => {
  test("every scenario declares each key once, with help and a default (a value or words)", () => {
    for (const s of scenarios) {
      const keys = s.params.map((p) => p.key);
      assert.equal(new Set(keys).size, keys.length, s.name);
      for (const p of s.params) {
        assert.ok(p.help.length > 0, `${s.name} ${p.key}`);
        assert.ok(p.default !== undefined || p.defaultText !== undefined, `${s.name} ${p.key}: a default`);
      }
    }
  });

  test("--set keys a scenario does not have are refused, with the close ones suggested", () => {
    assert.throws(
      () => scenarioParams(churn, ["pod=10"], false),
      (err: Error) =>
        err instanceof UsageError &&
        err.message ===
          'scenario slice-churn: no parameter "pod"; did you mean "pods" or "pods-per-node"? (it has pods, pods-per-node, remove, trickle, c3-pods, quiet-ms)',
    );
    assert.throws(() => scenarioParams(churn, ["pods"], false), /--set wants KEY=VALUE, got "pods"/);
    assert.throws(() => scenarioParams(churn, ["=3"], false), /--set wants KEY=VALUE, got "=3"/);
  });

  test("the workshop size by default; --full the claims' own, unless --set says otherwise", () => {
    const ctx = (params: Map<string, string>) => ({ params }) as unknown as ScenarioContext;
    const pods = churn.params.find((p) => p.key === "pods");
    assert.ok(pods);
    assert.equal(numberParam(ctx(scenarioParams(churn, [], false)), pods), 1000);
    assert.equal(numberParam(ctx(scenarioParams(churn, [], true)), pods), 5000);
    assert.equal(numberParam(ctx(scenarioParams(churn, ["pods=300"], true)), pods), 300);
    assert.deepEqual([...scenarioParams(scenarioByName("scale"), [], true)], [["services", "1000,5000"]]);
    assert.throws(() => scenarioParams(scenarioByName("hints"), [], true), /--full changes nothing here/);
  });

  test("on the command line: an unknown key stops before the scenario touches a lab", async () => {
    const r = await runMain([
      "scenario",
      "slice-churn",
      "--set",
      "remov=0.5",
      "--state-dir",
      "/nonexistent/lab",
    ]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^switchyard-lab: scenario slice-churn: no parameter "remov"; did you mean "remove"\?/,
    );
    const hints = await runMain(["scenario", "hints", "--full"]);
    assert.equal(hints.code, 2);
    assert.match(hints.stderr, /^switchyard-lab: scenario hints: unknown flag --full\n/);
  });

  test("each scenario's help lists its parameters with their defaults", async () => {
    const r = await runMain(["help", "scenario", "slice-churn"]);
    assert.match(r.stdout, /\n {2}pods +pause pods behind the Service \(default 1000; --full: 5000\)\n/);
    // Long lines wrap; compare with whitespace squeezed.
    assert.match(
      r.stdout.replace(/\s+/g, " "),
      / c3-pods [^(]*\(C3\) \(default a third of the pods, at most 300\)/,
    );
    assert.match(r.stdout, /--full +the claims' own sizes \(pods=5000\); takes longer/);
  });
});
