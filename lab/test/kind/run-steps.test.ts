import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Progress } from "@switchyard/testbed/progress";
import { KindStepError, runKindSteps, type StepDeps } from "../../src/kind/run-steps.js";
import type { KindStep } from "../../src/kind/steps.js";
import { StepClock } from "../../src/timing/step-times.js";

const quiet = new Progress("test", { write: () => {} });
const run = (name: string): KindStep => ({ phase: "stack", what: name, run: [name] });

/** Commands that take a few turns of the event loop; `fail` names the one that fails. */
function fakeDeps(fail?: string) {
  const events: string[] = [];
  let now = 0;
  const deps: StepDeps = {
    exec: async (argv) => {
      const name = argv[0] ?? "";
      events.push(`start ${name}`);
      for (let i = 0; i < (name.startsWith("slow") ? 6 : 2); i++) await new Promise((r) => setImmediate(r));
      now += 1000;
      events.push(`end ${name}`);
      if (name === fail) throw new Error(`${name} broke\nmore`);
      return "";
    },
    provision: async () => {},
    loadImages: async () => {},
    writeFile: () => {},
    sleep: async () => {},
    now: () => now,
  };
  return { deps, events, clock: new StepClock(() => now) };
}

describe("kind steps: lanes run at once", () => {
  test("every lane's first step starts before any ends; the group ends when the last lane does", async () => {
    const m = fakeDeps();
    const group: KindStep = {
      phase: "stack",
      what: "g",
      together: [[run("a1"), run("a2")], [run("slow-b")]],
    };
    await runKindSteps([group, run("after")], m.deps, quiet, 10_000, m.clock);
    assert.deepEqual(m.events.slice(0, 2), ["start a1", "start slow-b"]);
    assert.ok(m.events.indexOf("start a2") < m.events.indexOf("end slow-b"), "a lane goes on by itself");
    assert.ok(m.events.indexOf("start after") > m.events.indexOf("end slow-b"), "after the whole group");
    assert.deepEqual(
      m.clock.times.map((t) => t.step),
      ["stack: a1", "stack: slow-b", "stack: a2", "stack: after"],
    );
  });

  test("a failing lane stops the others at their next step, and is thrown, naming its step, once all settled", async () => {
    const m = fakeDeps("a1");
    const group: KindStep = {
      phase: "stack",
      what: "g",
      together: [[run("a1"), run("a2")], [run("slow-b"), run("b2")], [run("slow-c")]],
    };
    await assert.rejects(runKindSteps([group, run("after")], m.deps, quiet, 10_000, m.clock), (err) => {
      assert.ok(err instanceof KindStepError);
      assert.equal(err.message, "a1 failed: a1 broke");
      return true;
    });
    for (const never of ["start a2", "start b2", "start after"]) assert.ok(!m.events.includes(never), never);
    // Nothing still running behind the caller's clean-up.
    assert.ok(m.events.includes("end slow-b") && m.events.includes("end slow-c"));
    assert.ok(
      m.clock.times.some((t) => t.step === "stack: a1"),
      "the failed step is timed too",
    );
  });

  test("when several lanes fail, the first lane's failure in plan order is the one named", async () => {
    const m = fakeDeps("slow-a");
    const deps = {
      ...m.deps,
      exec: async (argv: readonly string[]) => {
        await m.deps.exec(argv);
        if (argv[0] === "b") throw new Error("b broke too");
        return "";
      },
    };
    const group: KindStep = { phase: "stack", what: "g", together: [[run("slow-a")], [run("b")]] };
    await assert.rejects(
      runKindSteps([group], deps, quiet, 10_000, m.clock),
      /^Error: slow-a failed: slow-a broke$/,
    );
  });
});
