// The order of a pod's containers (init-containers.ts) with real processes, and the status the kubelet would post
// for each step (pod-status.ts).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { Pod } from "kubernetes-types/core/v1.js";
import { Container, type RestartPolicy } from "../../src/agent/container.js";
import { initRestartPolicy, runInitContainers, stopInOrder } from "../../src/agent/init-containers.js";
import { type ContainerView, type InitContainerView, podStatus } from "../../src/agent/pod-status.js";

type Spec = NonNullable<Pod["spec"]>["containers"][number];
const dir = mkdtempSync(join(tmpdir(), "switchyard-init-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A container running `script` under sh in the test's folder. */
function shContainer(name: string, script: string, restartPolicy: RestartPolicy): Container {
  const output = { stdout: join(dir, `${name}.stdout`), stderr: join(dir, `${name}.stderr`) };
  return new Container({
    name,
    argv: ["sh", "-c", script],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DIR: dir },
    output,
    restartPolicy,
    onChange: () => {},
  });
}

describe("init containers, in the kubelet's order", () => {
  test("a regular init container restarts on failure unless the pod's policy is Never; a sidecar always", () => {
    const init: Spec = { name: "i" };
    const sidecar: Spec = { name: "s", restartPolicy: "Always" };
    assert.equal(initRestartPolicy(init, undefined), "OnFailure");
    assert.equal(initRestartPolicy(init, "Always"), "OnFailure");
    assert.equal(initRestartPolicy(init, "OnFailure"), "OnFailure");
    assert.equal(initRestartPolicy(init, "Never"), "Never");
    assert.equal(initRestartPolicy(sidecar, "Never"), "Always");
  });

  test("each starts after the one before succeeded; a sidecar keeps running; a failing one is run again", async () => {
    const made: Container[] = [];
    /** What the containers made so far were doing when the next one was started. */
    const before: string[] = [];
    const scripts: Record<string, string> = {
      // Fails the first time, so OnFailure runs it again (after the 1 s back-off).
      flaky: 'test -f "$DIR/flaky.ran" || { touch "$DIR/flaky.ran"; exit 3; }',
      sidecar: "exec sleep 30",
      last: "true",
    };
    const specs: Spec[] = [{ name: "flaky" }, { name: "sidecar", restartPolicy: "Always" }, { name: "last" }];
    const stateOf = (c: Container) =>
      c.running
        ? `running ${Date.now() - c.startedAtMs >= 290 ? "≥" : "<"} 0.3 s`
        : `exit ${c.state.terminated?.exitCode} after ${c.restartCount} restarts`;
    try {
      const ok = await runInitContainers(
        specs,
        async (spec) => {
          before.push(`${spec.name}: ${made.map(stateOf).join(", ")}`);
          const c = shContainer(spec.name, scripts[spec.name] ?? "", initRestartPolicy(spec, "Always"));
          made.push(c);
          c.start();
          // The sidecar counts as started a little after it runs, as once its startup probe passes.
          const started = new Promise<void>((resolve) =>
            setTimeout(resolve, spec.name === "sidecar" ? 300 : 0),
          );
          return { c, started };
        },
        () => false,
      );
      assert.equal(ok, true);
      assert.deepEqual(before, [
        "flaky: ",
        "sidecar: exit 0 after 1 restarts",
        "last: exit 0 after 1 restarts, running ≥ 0.3 s",
      ]);
      assert.equal(made[0]?.lastState.terminated?.exitCode, 3);
      assert.ok(made[1]?.running, "the sidecar still runs");
      assert.equal(made[2]?.state.terminated?.exitCode, 0);
    } finally {
      await Promise.all(made.map((c) => c.stop(0)));
    }
  });

  test("under restartPolicy Never a failed init container ends the sequence; the next never starts", async () => {
    const names: string[] = [];
    const ok = await runInitContainers(
      [{ name: "fails" }, { name: "never" }],
      async (spec) => {
        names.push(spec.name);
        const c = shContainer(spec.name, "exit 7", initRestartPolicy(spec, "Never"));
        c.start();
        return { c, started: Promise.resolve() };
      },
      () => false,
    );
    assert.equal(ok, false);
    assert.deepEqual(names, ["fails"]);
  });

  test("a pod being deleted starts no more init containers, and one that cannot be made waits until then", async () => {
    let deleting = false;
    const made: Container[] = [];
    const run = runInitContainers(
      [{ name: "unmade" }, { name: "next" }],
      async (spec) => {
        // Never started, as a container whose volume could not be prepared.
        const c = shContainer(spec.name, "true", "OnFailure");
        made.push(c);
        return { c, started: undefined };
      },
      () => deleting,
    );
    await new Promise((r) => setTimeout(r, 50));
    deleting = true;
    await made[0]?.stop(0);
    assert.equal(await run, false);
    assert.equal(made.length, 1);
  });

  test("on the way down every container begins at once; sidecars get SIGTERM after the main ones, in reverse", async () => {
    const events: string[] = [];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await stopInOrder(["app", "init"], ["first-sidecar", "second-sidecar"], async (name, waitTurn) => {
      events.push(`${name} begins`);
      await waitTurn(10_000);
      events.push(`${name} SIGTERM`);
      await sleep(name === "app" ? 200 : 50);
      events.push(`${name} exited`);
    });
    assert.deepEqual(events, [
      "app begins",
      "init begins",
      "second-sidecar begins",
      "first-sidecar begins",
      "app SIGTERM",
      "init SIGTERM",
      "init exited",
      "app exited",
      "second-sidecar SIGTERM",
      "second-sidecar exited",
      "first-sidecar SIGTERM",
      "first-sidecar exited",
    ]);
  });

  test("a sidecar waits for its turn no longer than the grace it has left", async () => {
    const events: string[] = [];
    await stopInOrder(["app"], ["sidecar"], async (name, waitTurn) => {
      await waitTurn(50);
      events.push(`${name} SIGTERM`);
      if (name === "app") await new Promise((r) => setTimeout(r, 300));
      events.push(`${name} exited`);
    });
    assert.deepEqual(events, ["app SIGTERM", "sidecar SIGTERM", "sidecar exited", "app exited"]);
  });
});

const view = (name: string, state: object, extra: Partial<ContainerView> = {}): ContainerView => ({
  name,
  image: "i",
  state,
  lastState: {},
  restartCount: 0,
  ready: false,
  ...extra,
});
const initView = (name: string, state: object, restartable: boolean, extra: Partial<ContainerView> = {}) =>
  ({ ...view(name, state, extra), restartable }) as InitContainerView;
const now = new Date("2024-01-01T00:00:05Z");

function statusOf(inits: InitContainerView[], containers: ContainerView[], restartPolicy = "Always") {
  const pod: Pod = { metadata: { name: "p" }, spec: { restartPolicy, containers: [] } };
  const s = podStatus(
    pod,
    {
      hostIps: ["198.18.0.11"],
      podIps: ["10.244.0.2"],
      startTime: "t",
      sandboxReady: true,
      containers,
      initContainers: inits,
    },
    now,
  );
  const cond = (type: string) => {
    const c = s.conditions?.find((x) => x.type === type);
    return [c?.status, c?.reason, c?.message].filter(Boolean).join(" ");
  };
  return { s, cond };
}

describe("pod status with init containers, as the kubelet generates it", () => {
  const waitingMain = view("app", { waiting: { reason: "PodInitializing" } });

  test("while an init container runs: Pending, not Initialized, its name in the message", () => {
    const { s, cond } = statusOf(
      [
        initView("setup", { running: {} }, false),
        initView("proxy", { waiting: { reason: "PodInitializing" } }, true),
      ],
      [waitingMain],
    );
    assert.equal(s.phase, "Pending");
    assert.equal(
      cond("Initialized"),
      "False ContainersNotInitialized containers with incomplete status: [setup proxy]",
    );
    assert.equal(
      cond("ContainersReady"),
      "False ContainersNotReady containers with unready status: [proxy app]",
    );
    assert.equal(cond("Ready"), "False ContainersNotReady containers with unready status: [proxy app]");
    assert.deepEqual(
      s.initContainerStatuses?.map((c) => [c.name, c.started, c.ready]),
      [
        ["setup", true, false],
        ["proxy", false, false],
      ],
    );
  });

  test("init done, sidecar and main running and ready: Running, Initialized, Ready", () => {
    const { s, cond } = statusOf(
      [
        initView("setup", { terminated: { exitCode: 0, reason: "Completed" } }, false, { ready: true }),
        initView("proxy", { running: {} }, true, { ready: true }),
      ],
      [view("app", { running: {} }, { ready: true })],
    );
    assert.equal(s.phase, "Running");
    assert.equal(cond("Initialized"), "True");
    assert.equal(cond("Ready"), "True");
  });

  test("a sidecar that is not ready holds the pod's readiness back", () => {
    const { cond } = statusOf(
      [initView("proxy", { running: {} }, true, { ready: false })],
      [view("app", { running: {} }, { ready: true })],
    );
    assert.equal(cond("ContainersReady"), "False ContainersNotReady containers with unready status: [proxy]");
  });

  test("a sidecar restarting after the main containers ran leaves the pod Initialized and Running", () => {
    const crashed = { terminated: { exitCode: 1, reason: "Error" } };
    const { s, cond } = statusOf(
      [initView("proxy", { waiting: { reason: "CrashLoopBackOff" } }, true, { lastState: crashed })],
      [view("app", { running: {} }, { ready: true })],
    );
    assert.equal(s.phase, "Running");
    assert.equal(cond("Initialized"), "True");
  });

  test("a failed init container: Failed under Never, Pending while OnFailure runs it again", () => {
    const failed = initView("setup", { terminated: { exitCode: 2, reason: "Error" } }, false);
    assert.equal(statusOf([failed], [waitingMain], "Never").s.phase, "Failed");
    const backingOff = initView("setup", { waiting: { reason: "CrashLoopBackOff" } }, false, {
      lastState: { terminated: { exitCode: 2, reason: "Error" } },
    });
    assert.equal(statusOf([backingOff], [waitingMain], "OnFailure").s.phase, "Pending");
  });

  test("main containers done under Never with the sidecar stopped: Succeeded, Initialized PodCompleted", () => {
    const { s, cond } = statusOf(
      [initView("proxy", { terminated: { exitCode: 143, reason: "Error" } }, true)],
      [view("app", { terminated: { exitCode: 0, reason: "Completed" } })],
      "Never",
    );
    assert.equal(s.phase, "Succeeded");
    assert.equal(cond("Initialized"), "True PodCompleted");
    assert.equal(cond("ContainersReady"), "False PodCompleted");
  });

  test("a pod without init containers has no initContainerStatuses", () => {
    const { s } = statusOf([], [view("app", { running: {} }, { ready: true })]);
    assert.equal(s.initContainerStatuses, undefined);
  });
});
