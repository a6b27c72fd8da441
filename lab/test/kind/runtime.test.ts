import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { kindLogsArgs } from "../../src/kind/logs.js";
import { type Probe, type RuntimeFacts, selectRuntime } from "../../src/kind/select-runtime.js";
import { findKindTools } from "../../src/kind/tools.js";

const ok: Probe = { ok: true };
const noDaemon: Probe = {
  ok: false,
  why: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock",
};
const noNetns: Probe = { ok: false, why: "mount --make-shared /run/netns failed: Operation not permitted" };

function facts(platform: string, uid: number | undefined, netns: Probe, docker: Probe) {
  const asked: string[] = [];
  const f: RuntimeFacts = {
    platform,
    uid,
    netns: async () => {
      asked.push("netns");
      return netns;
    },
    docker: async () => {
      asked.push("docker");
      return docker;
    },
  };
  return { f, asked };
}

describe("default runtime", () => {
  const cases: [string, string, number | undefined, Probe, Probe, string, string[]][] = [
    ["root on Linux", "linux", 0, ok, ok, "netns", ["netns"]],
    ["root on Linux, no Docker", "linux", 0, ok, noDaemon, "netns", ["netns"]],
    ["not root, Docker", "linux", 1000, ok, ok, "kind", ["docker"]],
    ["root, ip netns broken, Docker", "linux", 0, noNetns, ok, "kind", ["netns", "docker"]],
    ["macOS with Docker", "darwin", 501, ok, ok, "kind", ["docker"]],
    ["Windows with Docker", "win32", undefined, ok, ok, "kind", ["docker"]],
  ];
  for (const [name, platform, uid, netns, docker, want, probed] of cases)
    test(name, async () => {
      const { f, asked } = facts(platform, uid, netns, docker);
      assert.deepEqual(await selectRuntime(f), { runtime: want });
      assert.deepEqual(asked, probed);
    });

  test("neither: one line saying what each lacks", async () => {
    const answers = await Promise.all([
      selectRuntime(facts("linux", 1000, ok, noDaemon).f),
      selectRuntime(facts("linux", 0, noNetns, { ok: false, why: "docker is not on PATH" }).f),
      selectRuntime(facts("darwin", 501, ok, noDaemon).f),
    ]);
    assert.deepEqual(answers, [
      {
        error:
          "no lab runtime works here: netns: it needs root (running as uid 1000; try sudo); kind: it needs a running Docker engine (docker info: Cannot connect to the Docker daemon at unix:///var/run/docker.sock)",
      },
      {
        error:
          "no lab runtime works here: netns: `ip netns` does not work here (mount --make-shared /run/netns failed: Operation not permitted); kind: it needs a running Docker engine (docker info: docker is not on PATH)",
      },
      {
        error:
          "no lab runtime works here: netns: it needs Linux (this is darwin); kind: it needs a running Docker engine (docker info: Cannot connect to the Docker daemon at unix:///var/run/docker.sock)",
      },
    ]);
  });
});

describe("kind tools", () => {
  const all = { docker: "/usr/bin/docker", kubectl: "/k/kubectl" };

  test("all found: docker and kubectl, no kind CLI (the nodes are made through testcontainers)", () => {
    assert.deepEqual(
      findKindTools((n) => all[n], "/cache"),
      all,
    );
  });

  test("docker or kubectl missing: one error naming each and how to get it", () => {
    assert.throws(
      () => findKindTools((n) => (n === "kubectl" ? undefined : all[n]), "/cache"),
      (err: Error) =>
        !err.message.includes("\n") &&
        err.message.startsWith("the kind runtime cannot start: kubectl is missing:") &&
        err.message.includes("SWITCHYARD_KUBECTL=<path>") &&
        err.message.includes("/cache"),
    );
    assert.throws(
      () => findKindTools(() => undefined, "/cache"),
      /^Error: the kind runtime cannot start: docker is not on PATH: the kind runtime needs the Docker CLI and a running Docker engine; kubectl is missing: /,
    );
  });
});

describe("kind logs", () => {
  test("control-plane components are static pods on the control-plane node; pods by namespace/pod[/container]", () => {
    assert.deepEqual(kindLogsArgs("kube-apiserver", "lab"), [
      "-n",
      "kube-system",
      "logs",
      "kube-apiserver-lab-control-plane",
    ]);
    assert.deepEqual(kindLogsArgs("kube-system/coredns-x", "lab"), [
      "-n",
      "kube-system",
      "logs",
      "coredns-x",
    ]);
    assert.deepEqual(kindLogsArgs("default/echo/server", "lab"), [
      "-n",
      "default",
      "logs",
      "echo",
      "-c",
      "server",
    ]);
    assert.throws(() => kindLogsArgs("agent-node-1", "lab"), /^Error: logs: on a kind lab name/);
  });
});
