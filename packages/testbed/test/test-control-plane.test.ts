// The test helper other packages build on: a restart keeps the same address, and stop() leaves nothing behind.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { isOurs } from "../src/controlplane/processes.js";
import { missingControlPlane, startControlPlane } from "../src/test-control-plane.js";
import { resolveBinary } from "../src/upstream/binaries.js";

const run = promisify(execFile);

describe("startControlPlane", { skip: missingControlPlane(["kubectl"]) }, () => {
  test("kill and restart the apiserver and etcd, compact etcd, then stop: no process or folder left", async () => {
    const cp = await startControlPlane();
    const kubectl = (...args: string[]) =>
      run(resolveBinary("kubectl").path ?? "kubectl", ["--kubeconfig", cp.kubeconfigPath, ...args]);
    try {
      await kubectl("create", "namespace", "before-restart");
      await cp.killApiserver();
      await assert.rejects(kubectl("get", "ns", "--request-timeout=2s"));
      await cp.startApiserver();
      const { stdout } = await kubectl("get", "ns", "before-restart", "-o", "name");
      assert.equal(stdout.trim(), "namespace/before-restart");
      // etcd too: the apiserver stays up without it, and its data is still there after.
      await cp.killEtcd();
      await assert.rejects(kubectl("create", "namespace", "while-etcd-is-down", "--request-timeout=2s"));
      await cp.startEtcd();
      await kubectl("create", "namespace", "after-etcd-restart");
      const both = await kubectl("get", "ns", "before-restart", "after-etcd-restart", "-o", "name");
      assert.equal(both.stdout.trim(), "namespace/before-restart\nnamespace/after-etcd-restart");
      const revision = await cp.compactEtcd();
      assert.ok(revision > 1);
    } finally {
      const processes = [...cp.state.processes];
      await cp.stop();
      for (const p of processes) assert.equal(isOurs(p), false, `${p.name} pid ${p.pid} left running`);
      assert.equal(existsSync(cp.stateDir), false);
    }
  });
});
