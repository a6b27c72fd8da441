// What scripts/run.mjs sets up before each job (scripts/setup-plan.mjs), and whether a run goes on after a step
// that could not be done. The steps themselves (apt-get, npm ci, upstream build, docker) are run.mjs's shell.
import assert from "node:assert/strict";
import { test } from "node:test";
import { afterFailure, blockedBy, setupPlan } from "../scripts/setup-plan.mjs";

const forSuites = ["e2e programs", "docker engine", "images", "kind node image"];

test("npm test sets up what its suites need: the e2e programs, the engine, the images, the kind node image", () => {
  const plan = setupPlan("test", [], { root: true });
  assert.deepEqual(plan.steps, [
    "system packages",
    "npm dependencies",
    "build",
    "upstream binaries",
    ...forSuites,
  ]);
  assert.deepEqual(plan.tools, ["lab", "test"]);
  assert.equal(plan.upstream, undefined, "upstream build's default set");
  assert.deepEqual(setupPlan("setup", [], { root: false }).steps, plan.steps, "setup is test's set-up alone");
});

test("a run of some files gets the e2e programs and the engine, not the images its suites build themselves", () => {
  assert.deepEqual(setupPlan("test", ["proxier"], { root: true }).steps.slice(4), [
    "e2e programs",
    "docker engine",
  ]);
});

test("the other jobs set up no more than before: no e2e programs, engine or images", () => {
  for (const job of ["lab", "bench", "upstream", "screenshots"])
    for (const step of forSuites)
      assert.ok(!setupPlan(job, [], { root: true }).steps.includes(step), `${job}: ${step}`);
  assert.deepEqual(setupPlan("bench", [], { root: true }).tools, ["lab", "bench"]);
  assert.deepEqual(setupPlan("screenshots", [], { root: true }).tools, ["lab", "test"]);
});

test("a lab command other than up needs only npm and the build; kind needs no kernel tools and only kubectl", () => {
  const down = setupPlan("lab", ["down"], { root: true });
  assert.deepEqual(down.steps, ["system packages", "npm dependencies", "build"]);
  assert.deepEqual(down.tools, []);
  assert.deepEqual(down.labArgs, ["down"]);
  for (const [args, root] of [
    [["--runtime", "kind"], true],
    [["--runtime=kind"], true],
    [[], false],
  ] as const) {
    const kind = setupPlan("lab", args, { root });
    assert.deepEqual(kind.upstream, ["kubectl"], args.join(" "));
    assert.deepEqual(kind.tools, []);
  }
  const netns = setupPlan("lab", ["--nodes", "5"], { root: true });
  assert.deepEqual(netns.labArgs, ["up", "--nodes", "5"]);
  assert.deepEqual([netns.upstream, netns.tools], [undefined, ["lab"]]);
  assert.deepEqual(setupPlan("lab", ["--runtime", "netns"], { root: false }).tools, ["lab"]);
});

test("npm test goes on without a step that only makes suites possible, unless every suite must run", () => {
  for (const step of ["upstream binaries", ...forSuites]) {
    assert.equal(afterFailure("test", step, false), "go on", step);
    assert.equal(afterFailure("setup", step, false), "go on", step);
    assert.equal(afterFailure("test", step, true), "stop", `${step} with SWITCHYARD_NO_SKIP=1`);
  }
  for (const step of ["system packages", "npm dependencies", "build"])
    assert.equal(afterFailure("test", step, false), "stop", step);
  assert.equal(afterFailure("lab", "upstream binaries", false), "stop", "the lab cannot run without them");
});

test("the images and the kind node image are not tried without an engine", () => {
  assert.equal(blockedBy("images", new Set(["docker engine"])), "docker engine");
  assert.equal(blockedBy("kind node image", new Set(["docker engine", "e2e programs"])), "docker engine");
  assert.equal(blockedBy("images", new Set(["e2e programs"])), undefined);
  assert.equal(blockedBy("docker engine", new Set(["upstream binaries"])), undefined);
});
