// The prober worker's judgement (probe-worker.ts) step by step, and the gRPC probe (probes.ts) against upstream's
// agnhost grpc-health-checking server, the one the e2e suite's gRPC probe specs run.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { freePort } from "@switchyard/testbed/controlplane";
import { resolveBinary } from "@switchyard/testbed/upstream";
import { ProbeWorker } from "../../src/agent/probe-worker.js";
import { probeOnce } from "../../src/agent/probes.js";

const target = (over: Partial<Parameters<ProbeWorker["due"]>[0]> = {}) => ({
  instance: 0,
  running: true,
  startedAtMs: 0,
  started: true,
  deleting: false,
  ...over,
});

describe("a probe worker, as the kubelet's", () => {
  test("readiness starts failing, passes after successThreshold, fails after failureThreshold", () => {
    const w = new ProbeWorker("readiness", { successThreshold: 2, failureThreshold: 2 });
    assert.equal(w.result, false);
    assert.ok(w.due(target(), 0));
    assert.equal(w.record("success"), undefined);
    assert.equal(w.record("success"), "changed");
    assert.equal(w.result, true);
    assert.equal(w.record("failure"), undefined);
    assert.equal(w.record("failure"), "changed");
    assert.equal(w.result, false);
  });

  test("liveness: alive at first; failureThreshold failures ask for a restart and hold until the next instance", () => {
    const w = new ProbeWorker("liveness", { failureThreshold: 3 });
    assert.equal(w.result, true);
    assert.ok(w.due(target(), 0));
    w.record("failure");
    w.record("failure");
    assert.equal(w.record("failure"), "restart");
    assert.equal(w.due(target(), 0), false, "on hold");
    assert.equal(w.resultFor(1), true, "a new instance starts alive");
    assert.ok(w.due(target({ instance: 1 }), 0));
    assert.equal(w.result, true);
  });

  test("startup runs until the container has started, the others only after; one failure too many restarts", () => {
    const startup = new ProbeWorker("startup", { failureThreshold: 2 });
    const liveness = new ProbeWorker("liveness", {});
    assert.equal(startup.result, undefined);
    assert.ok(startup.due(target({ started: false }), 0));
    assert.equal(liveness.due(target({ started: false }), 0), false);
    assert.equal(startup.record("success"), "changed");
    assert.equal(startup.due(target({ started: true }), 0), false, "decided: on hold");
    const failing = new ProbeWorker("startup", { failureThreshold: 2 });
    failing.due(target({ started: false }), 0);
    assert.equal(failing.record("failure"), undefined);
    assert.equal(failing.record("failure"), "restart");
  });

  test("initialDelaySeconds counts from the instance's start; a stopped container fails; deletion passes liveness", () => {
    const w = new ProbeWorker("readiness", { initialDelaySeconds: 5 });
    assert.equal(w.due(target({ startedAtMs: 1000 }), 5999), false);
    assert.ok(w.due(target({ startedAtMs: 1000 }), 6000));
    w.record("success");
    assert.equal(w.due(target({ running: false }), 7000), false);
    assert.equal(w.result, false);
    const live = new ProbeWorker("liveness", {});
    live.due(target(), 0);
    live.record("failure");
    assert.equal(live.due(target({ deleting: true }), 0), false);
    assert.equal(live.result, true);
  });
});

const agnhost = resolveBinary("agnhost").path;

describe("gRPC probe against agnhost grpc-health-checking", {
  skip: agnhost ? undefined : "no upstream agnhost binary",
}, () => {
  let server: ChildProcess;
  let port: number;
  let httpPort: number;

  before(async () => {
    [port, httpPort] = [await freePort(), await freePort()];
    server = spawn(
      agnhost ?? "",
      ["grpc-health-checking", `--port=${port}`, `--http-port=${httpPort}`, "--service=web"],
      { stdio: "ignore" },
    );
    await eventually("agnhost serving", async () =>
      (await probeOnce({ grpc: { port, service: "web" } }, "127.0.0.1", { name: "c" })) === "success"
        ? true
        : undefined,
    );
  });

  after(() => server?.kill());

  test("SERVING passes; NOT_SERVING, an unknown service and a closed port fail", async () => {
    const probe = (service: string, p = port) =>
      probeOnce({ grpc: { port: p, service } }, "127.0.0.1", { name: "c" });
    assert.equal(await probe("web"), "success");
    assert.equal(await probe("nope"), "failure", "NOT_FOUND for a service it does not know");
    assert.equal(await probe("web", await freePort()), "failure", "nothing listens");
    await fetch(`http://127.0.0.1:${httpPort}/make-not-serving`);
    assert.equal(await probe("web"), "failure");
    await fetch(`http://127.0.0.1:${httpPort}/make-serving`);
    assert.equal(await probe("web"), "success");
  });
});
