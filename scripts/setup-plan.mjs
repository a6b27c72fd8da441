// What scripts/run.mjs sets up before a job, and what a step that could not be done means for the run. Pure: run.mjs
// does the steps; test/setup-plan.test.ts checks the choices.
import { labCommandLine } from "./lab-args.mjs";

// The e2e suite and the programs its test pods run, for the conformance test (lab/test/netns/conformance.e2e.test.ts)
// and the e2e images (node scripts/images.mjs --e2e): upstream's on-demand binaries, not in `upstream build`'s default.
export const e2ePrograms = ["e2e.test", "agnhost", "ginkgo", "regression-issue-74839"];

// What each step needs done before it; when that could not be done, neither can the step.
const needs = {
  images: ["docker engine"],
  "kind node image": ["docker engine"],
};

// The steps after the build only make suites possible: without one, those suites skip and say why.
const forSuites = new Set([
  "upstream binaries",
  "e2e programs",
  "docker engine",
  "images",
  "kind node image",
]);

const testsJob = (job) => job === "test" || job === "setup";

/**
 * The set-up of `job` (test, setup, lab, bench, upstream, screenshots) with its arguments: the system tool sets to
 * install (scripts/run.mjs's tables), the upstream binaries to get (undefined: `upstream build`'s default), and the
 * steps in order. `setup` is the test job's set-up alone (CI runs it before lint and typecheck, which need the build).
 */
export function setupPlan(job, jobArgs, { root }) {
  const labArgs = labCommandLine(jobArgs);
  const labUp = job === "lab" && labArgs[0] === "up";
  // A lab command other than up (down, status ...) needs neither system packages nor upstream binaries.
  const labOther = job === "lab" && !labUp;
  // `npm run lab` on the kind runtime (asked for, or not root, so netns cannot work): no network-namespace tools
  // and only kubectl from upstream (no kind CLI: `up` makes the nodes through testcontainers; the cluster's own
  // components come from the node image). lab/src/kind/select-runtime.ts picks the runtime; this only avoids
  // installing what that runtime does not use.
  const runtimeAt = jobArgs.indexOf("--runtime");
  const wantsKind =
    labUp &&
    (jobArgs[runtimeAt + 1] === "kind" || jobArgs.includes("--runtime=kind") || (runtimeAt < 0 && !root));
  const tools =
    labOther || wantsKind
      ? []
      : testsJob(job) || job === "screenshots"
        ? ["lab", "test"]
        : job === "bench"
          ? ["lab", "bench"]
          : ["lab"];
  const steps = ["system packages", "npm dependencies", "build"];
  if (!labOther) steps.push("upstream binaries");
  if (testsJob(job)) steps.push("e2e programs", "docker engine");
  // A run of some files only (`npm test -- proxier`) goes without the images and the kind node image: the suites
  // that use them build them themselves (buildImage of @switchyard/testbed, the kind runtime's node image choice),
  // so the edit-and-test loop does not rebuild images its files may not need. A whole run gets them as steps of
  // their own, timed apart from the tests.
  if (job === "setup" || (job === "test" && jobArgs.length === 0)) steps.push("images", "kind node image");
  return { tools, upstream: wantsKind ? ["kubectl"] : undefined, labArgs, steps };
}

/** The step of `failed` that `step` needs, when one could not be done; undefined when nothing blocks it. */
export function blockedBy(step, failed) {
  return (needs[step] ?? []).find((need) => failed.has(need));
}

/**
 * After `step` of `job` could not be done: go on when it only makes some suites possible (they skip and say why),
 * except with SWITCHYARD_NO_SKIP=1, where any skip fails the run anyway: stopping now saves the whole test run.
 * Any other step (system packages, npm, the build; any step of the lab or bench jobs) stops the run.
 */
export function afterFailure(job, step, noSkip) {
  return testsJob(job) && forSuites.has(step) && !noSkip ? "go on" : "stop";
}
