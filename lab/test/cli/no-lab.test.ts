// Without a lab, each command that needs one says so in one line with the next step, and `env` keeps the
// project's Node first on PATH (issue 35's command-line manners).
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { kubectlNeedsCluster } from "../../src/cli/kubectl-cmd.js";
import { labPath } from "../../src/cli/lab-env.js";
import { runMain } from "./harness.js";

describe("without a lab", () => {
  const root = mkdtempSync(join(tmpdir(), "switchyard-nolab-"));
  const lab = join(root, "lab");
  const controlPlane = join(root, "controlplane");
  const saved = { ...process.env };

  before(() => {
    // Read by every command in this process; a cache of our own keeps `env`'s link out of the user's.
    Object.assign(process.env, {
      SWITCHYARD_LAB_DIR: lab,
      SWITCHYARD_STATE_DIR: controlPlane,
      XDG_CACHE_HOME: join(root, "cache"),
      SWITCHYARD_KUBECTL: "/bin/true",
    });
  });
  after(() => {
    for (const key of [
      "SWITCHYARD_LAB_DIR",
      "SWITCHYARD_STATE_DIR",
      "XDG_CACHE_HOME",
      "SWITCHYARD_KUBECTL",
    ]) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });

  test("kubectl is one line with the next step, not kubectl's errors about localhost:8080", async () => {
    assert.deepEqual(await runMain(["kubectl", "get", "ns"]), {
      code: 1,
      stdout: "",
      stderr: `switchyard-lab: kubectl: no lab in ${lab} and no control plane in ${controlPlane}; run switchyard-lab up first\n`,
    });
  });

  test("status, logs and controlplane status name the next step (controlplane reads SWITCHYARD_STATE_DIR, as kubectl)", async () => {
    assert.deepEqual(await runMain(["status"]), {
      code: 1,
      stdout: `no lab in ${lab}; run switchyard-lab up\n`,
      stderr: "",
    });
    assert.deepEqual(await runMain(["logs", "kube-apiserver"]), {
      code: 1,
      stdout: "",
      stderr: `switchyard-lab: no lab in ${lab}; run switchyard-lab up\n`,
    });
    assert.deepEqual(await runMain(["controlplane", "status"]), {
      code: 1,
      stdout: `no control plane in ${controlPlane}; run switchyard-lab controlplane up\n`,
      stderr: "",
    });
  });

  test("env puts the Node running the lab (the project's) first on PATH, before the caller's", async () => {
    const r = await runMain(["env"]);
    assert.equal(r.code, 0);
    const path = /^export PATH="([^"]*)"$/m.exec(r.stdout)?.[1] ?? "";
    assert.deepEqual(path.split(":"), [
      dirname(process.execPath),
      "/bin",
      join(root, "cache", "switchyard", "bin"),
      "$PATH",
    ]);
    assert.equal(r.stderr, "# no lab or control plane is up: KUBECONFIG not set; run switchyard-lab up\n");
  });
});

test("labPath: Node, kubectl and the lab's command first, each folder once", () => {
  const e = { kubectl: "/opt/k/kubectl", kubeconfig: undefined, binDir: "/opt/k", nodeDir: "/opt/node/bin" };
  assert.equal(labPath(e, "/usr/bin"), "/opt/node/bin:/opt/k:/usr/bin");
});

test("which kubectl command lines need a cluster", () => {
  for (const args of [["get", "ns"], ["-n", "kube-system", "logs", "x"], ["version"]])
    assert.equal(kubectlNeedsCluster(args), true, args.join(" "));
  for (const args of [
    [],
    ["help"],
    ["get", "--help"],
    ["-h"],
    ["version", "--client"],
    ["completion", "bash"],
    ["config", "view"],
    ["--kubeconfig=/k", "get", "ns"],
    ["--server", "https://x", "get", "ns"],
  ])
    assert.equal(kubectlNeedsCluster(args), false, args.join(" "));
});
