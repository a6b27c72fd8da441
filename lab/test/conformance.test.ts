import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { Progress } from "@switchyard/testbed/progress";
import { parseJunit } from "../src/conformance/junit.js";
import { e2eImagesOnKind, providedImages } from "../src/conformance/kind-images.js";
import { numNodes } from "../src/conformance/on-kind.js";
import { conformanceOnNetns } from "../src/conformance/on-netns.js";
import { compareRuns, comparisonLines, type RunSummary, runTable } from "../src/conformance/report.js";
import { defaultSkip, e2eCommand } from "../src/conformance/run.js";

// A ginkgo v2 JUnit report as `--ginkgo.junit-report` writes one (reporters/junit_report.go, v2.32.0): the suite's
// setup nodes, a passed, a skipped and a failed spec, names "[It] <full text> [labels]", escaped attributes.
const junit = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" disabled="2" errors="0" failures="1" time="80.1">
  <testsuite name="Kubernetes e2e suite" package="/" tests="5" disabled="0" skipped="1" errors="0" failures="1" time="80.1" timestamp="2026-12-01T23:00:00">
    <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="1.2"></testcase>
    <testcase name="[It] [sig-network] Services should serve a basic endpoint from pods  [Conformance] [Conformance, sig-network]" classname="Kubernetes e2e suite" status="passed" time="12.5">
      <system-err>&gt; Enter [It] ...</system-err>
    </testcase>
    <testcase name="[It] [sig-network] Services should be able to up and down services [Slow]" classname="Kubernetes e2e suite" status="skipped" time="0">
      <skipped message="skipped"></skipped>
    </testcase>
    <testcase name="[It] [sig-network] DNS should provide DNS for services  [Conformance]" classname="Kubernetes e2e suite" status="failed" time="65.3">
      <failure message="failed to get &#34;dns-test&#34; &amp; more&#xA;second line" type="failed">[FAILED] ...</failure>
    </testcase>
    <testcase name="[It] [sig-network] Proxy version v1 should proxy through a service" classname="Kubernetes e2e suite" status="timedout" time="300"/>
    <testcase name="[ReportAfterSuite] Kubernetes e2e suite report" classname="Kubernetes e2e suite" status="passed" time="0.1"></testcase>
  </testsuite>
</testsuites>`;

describe("conformance: the e2e suite's report, pure parts", () => {
  test("specs from ginkgo's JUnit, setup nodes left out, every non-pass non-skip a failure with its first line", () => {
    assert.deepEqual(parseJunit(junit), [
      {
        name: "[sig-network] Services should serve a basic endpoint from pods  [Conformance] [Conformance, sig-network]",
        status: "passed",
        seconds: 12.5,
      },
      {
        name: "[sig-network] Services should be able to up and down services [Slow]",
        status: "skipped",
        seconds: 0,
      },
      {
        name: "[sig-network] DNS should provide DNS for services  [Conformance]",
        status: "failed",
        seconds: 65.3,
        reason: 'failed to get "dns-test" & more',
      },
      {
        name: "[sig-network] Proxy version v1 should proxy through a service",
        status: "failed",
        seconds: 300,
        reason: "timedout",
      },
    ]);
  });

  const run = (stack: string, statuses: Record<string, "passed" | "failed" | "skipped">): RunSummary => ({
    stack,
    runtime: "kind",
    focus: "x",
    skip: "y",
    seconds: 61,
    specs: Object.entries(statuses).map(([name, status]) => ({
      name,
      status,
      seconds: 1,
      ...(status === "failed" ? { reason: `${name} broke` } : {}),
    })),
  });

  test("ours against upstream's: a spec upstream passes and ours fails is the one that matters", () => {
    const ours = run("switchyard", {
      a: "passed",
      b: "failed",
      c: "failed",
      d: "passed",
      e: "skipped",
      f: "passed",
    });
    const upstream = run("upstream", { a: "passed", b: "passed", c: "failed", d: "failed", e: "passed" });
    const c = compareRuns(ours, upstream);
    assert.deepEqual(c, {
      regressions: [{ name: "b", reason: "b broke" }],
      bothFail: [{ name: "c", reason: "c broke" }],
      onlyOurs: ["d"],
      bothPass: 1,
    });
    assert.match(
      comparisonLines(c)[0] ?? "",
      /^both pass: 1; ours fails where upstream's passes: 1; both fail: 1;/,
    );
    assert.deepEqual(runTable(ours).slice(0, 3), [
      "switchyard stack on kind: 3 passed, 2 failed, 1 skipped in 61s",
      "",
      "PASS  a",
    ]);
  });

  test("the command line: no cloud provider, the focus, a JUnit report in the run's folder, no log dumps", () => {
    const run = {
      e2eTest: "/bin/e2e.test",
      kubectl: "/bin/kubectl",
      kubeconfig: "/k",
      focus: "\\[sig-network\\]",
      skip: defaultSkip,
      dir: "/out",
      stack: "switchyard",
      runtime: "kind",
      out: { write: () => true },
      extra: ["--ginkgo.v"],
    };
    const args = e2eCommand(run);
    assert.equal(args[0], "/bin/e2e.test");
    for (const a of ["--kubeconfig=/k", "--kubectl-path=/bin/kubectl", "--provider=skeleton"])
      assert.ok(args.includes(a), a);
    assert.ok(args.includes("--ginkgo.junit-report=/out/junit.xml"));
    assert.ok(args.includes("--dump-logs-on-failure=false"));
    assert.equal(args.at(-1), "--ginkgo.v");
    // Through ginkgo's CLI: its own flags first, then the suite and its flags after `--`.
    const parallel = e2eCommand({ ...run, ginkgo: { path: "/bin/ginkgo", procs: 4 } });
    assert.deepEqual(parallel.slice(0, 3), ["/bin/ginkgo", "--procs=4", "--no-color"]);
    assert.ok(parallel.includes("--junit-report=/out/junit.xml"));
    const split = parallel.indexOf("--");
    assert.equal(parallel[split - 1], "/bin/e2e.test");
    assert.ok(parallel.slice(split).includes("--kubeconfig=/k"));
    assert.match("[sig-network] Services should work [Slow]", new RegExp(defaultSkip));
    assert.doesNotMatch(
      "[sig-network] Services should serve a basic endpoint from pods  [Conformance]",
      new RegExp(defaultSkip),
    );
  });

  test("on kind, the e2e images go only into the nodes that lack them; none built or pulled that the engine has", async () => {
    const agnhost = "registry.k8s.io/e2e-test-images/agnhost:2.66.1";
    const busybox = "registry.k8s.io/e2e-test-images/busybox:1.37.0-2";
    const commands: string[] = [];
    const loads: string[] = [];
    const exec = async (argv: readonly string[]) => {
      commands.push(argv.join(" "));
      if (argv[1] === "--list-images") return `${agnhost}\n${busybox}\n`;
      if (argv[1] === "ps") return "lab-control-plane\nlab-worker\n";
      if (argv[1] === "image") return argv.at(-1) === agnhost ? "sha256:a" : "sha256:b";
      if (argv.includes("crictl")) {
        const images = argv[2] === "lab-worker" ? [] : [{ id: "sha256:a", repoTags: [agnhost] }];
        return JSON.stringify({ images });
      }
      throw new Error(`unexpected ${argv.join(" ")}`);
    };
    const load = async (images: readonly string[], nodes: readonly string[]) => {
      loads.push(`${images.join(" ")} -> ${nodes.join(" ")}`);
    };
    const quiet = new Progress("test", { write: () => {} });
    const refs = await e2eImagesOnKind(
      exec,
      "docker",
      "lab",
      "/bin/e2e.test",
      "/repo",
      "/dev/null",
      quiet,
      load,
    );
    assert.deepEqual(refs, [agnhost, busybox]);
    assert.deepEqual(loads.sort(), [
      `${agnhost} ${busybox} -> lab-worker`,
      `${busybox} -> lab-control-plane`,
    ]);
    assert.ok(!commands.some((c) => c.includes("pull") || c.includes("images.mjs")));
  });

  test("the images the lab provides, out of the suite's own list", () => {
    const list = [
      "registry.k8s.io/build-image/distroless-iptables:v0.9.9",
      "registry.k8s.io/build-image/kube-cross:v1.34.0-go1.25.0-bullseye.0",
      "registry.k8s.io/e2e-test-images/agnhost:2.66.1",
      "registry.k8s.io/e2e-test-images/busybox:1.37.0-2",
      "registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1",
      "registry.k8s.io/e2e-test-images/httpd:2.4.38-4",
      "registry.k8s.io/e2e-test-images/nginx:1.27.0-2",
      "registry.k8s.io/e2e-test-images/nginx:1.28.0-2",
      "registry.k8s.io/e2e-test-images/regression-issue-74839:1.5",
      "registry.k8s.io/pause:3.10.2",
      "",
    ].join("\n");
    assert.deepEqual(providedImages(list), [
      "registry.k8s.io/build-image/distroless-iptables:v0.9.9",
      "registry.k8s.io/e2e-test-images/agnhost:2.66.1",
      "registry.k8s.io/e2e-test-images/busybox:1.37.0-2",
      "registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1",
      "registry.k8s.io/e2e-test-images/nginx:1.27.0-2",
      "registry.k8s.io/e2e-test-images/nginx:1.28.0-2",
      "registry.k8s.io/e2e-test-images/regression-issue-74839:1.5",
    ]);
  });

  test("every ginkgo process is told the lab's node count, unless the caller gives one", () => {
    assert.deepEqual(numNodes(2, []), ["--num-nodes=2"]);
    assert.deepEqual(numNodes(2, ["--num-nodes=5"]), []);
    assert.deepEqual(numNodes(undefined, []), []);
  });

  test("a netns lab without a stack is refused before the suite is looked for", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cf-netns-"));
    try {
      const run = { stateDir: dir, focus: "x", skip: "y", procs: 1, sink: { write: () => true } };
      await assert.rejects(
        conformanceOnNetns(run),
        /not up with a stack; run switchyard-lab up --runtime netns/,
      );
      writeFileSync(join(dir, "lab.json"), JSON.stringify({ runtime: "netns", kubeconfig: "/k" }));
      await assert.rejects(conformanceOnNetns(run), /not up with a stack/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
