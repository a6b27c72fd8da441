import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { eventually } from "@switchyard/kube/testing";
import type { Pod } from "kubernetes-types/core/v1.js";
import { adminCredentials, KubeClient } from "../../src/kubeapi/client.js";
import { labDown } from "../../src/netns/lab-down.js";
import { type LabState, labPaths } from "../../src/netns/state.js";
import { missingControlPlane, resolveBinary } from "../../src/testing.js";
import { upTestLab } from "./test-lab.js";

// Its own prefix and networks, so other labs on this host are left alone.
const lab = { prefix: "syk", nodes: 1, zones: 1, nodeCidr: "198.18.9.0/24", clusterCidr: "10.251.0.0/16" };
const skip =
  process.getuid?.() !== 0
    ? "the netns runtime needs root (network namespaces, veth, routes)"
    : missingControlPlane(["kube-controller-manager", "kube-scheduler", "kubectl"]);
const nodeIp = "198.18.9.11";
const ns = "kubelet-api";
const execFileAsync = promisify(execFile);

const counterPod = (name: string, args: string[]): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: {
    terminationGracePeriodSeconds: 1,
    containers: [{ name: "counter", image: "switchyard/counter:0.1.0", args }],
  },
});

const numbers = (out: string) => [...out.matchAll(/line (\d+)/g)].map((m) => Number(m[1]));

describe("kubelet API of the netns node agent, through the real apiserver and kubectl", { skip }, () => {
  let dir: string;
  let state: LabState;
  let client: KubeClient;
  const kubectl = async (...args: string[]) =>
    (
      await execFileAsync(resolveBinary("kubectl").path ?? "kubectl", [
        "--kubeconfig",
        state.kubeconfig,
        "-n",
        ns,
        ...args,
      ])
    ).stdout;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-lab-"));
    state = await upTestLab(dir, lab);
    console.log(`# lab up in ${state.upSeconds?.toFixed(1)}s`);
    client = new KubeClient(adminCredentials(state.server, labPaths(dir).controlPlane));
    await client.call("POST", "/api/v1/namespaces", { metadata: { name: ns } });
    await eventually("the namespace's default ServiceAccount", () =>
      client.call("GET", `/api/v1/namespaces/${ns}/serviceaccounts/default`),
    );
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, counterPod("ticker", []));
    await client.call("POST", `/api/v1/namespaces/${ns}/pods`, counterPod("crasher", ["--exit-after", "3"]));
  });

  after(async () => {
    client?.close();
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("kubectl logs, --tail and --timestamps", async () => {
    const out = await eventually("three lines logged", async () => {
      const text = await kubectl("logs", "ticker");
      return numbers(text).length >= 3 ? text : undefined;
    });
    const seen = numbers(out);
    assert.deepEqual(seen.slice(0, 3), [1, 2, 3], out);
    const tail = await kubectl("logs", "ticker", "--tail=2");
    assert.equal(tail.trimEnd().split("\n").length, 2, tail);
    const stamped = await kubectl("logs", "ticker", "--tail=1", "--timestamps");
    assert.match(stamped, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z line \d+\n$/);
  });

  test("kubectl logs -f sees a new line arrive", async () => {
    const last = Math.max(...numbers(await kubectl("logs", "ticker")));
    const follow = spawn(resolveBinary("kubectl").path ?? "kubectl", [
      "--kubeconfig",
      state.kubeconfig,
      "-n",
      ns,
      "logs",
      "-f",
      "ticker",
    ]);
    try {
      const newer = await new Promise<number>((resolve, reject) => {
        let text = "";
        follow.stdout.on("data", (d: Buffer) => {
          text += d.toString();
          const fresh = numbers(text).find((n) => n > last);
          if (fresh !== undefined) resolve(fresh);
        });
        follow.on("exit", (code) => reject(new Error(`kubectl logs -f exited (${code}): ${text}`)));
      });
      assert.ok(newer > last);
    } finally {
      follow.kill();
    }
  });

  test("kubectl logs --previous after the container restarted", async () => {
    await eventually("crasher restarted", async () => {
      const pod = await client.call<Pod>("GET", `/api/v1/namespaces/${ns}/pods/crasher`);
      return (pod.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1;
    });
    const previous = await kubectl("logs", "crasher", "--previous");
    assert.deepEqual(numbers(previous), [1, 2, 3], previous);
    await assert.rejects(
      kubectl("logs", "ticker", "--previous"),
      /previous terminated container "counter" in pod "ticker" not found/,
    );
    await assert.rejects(
      kubectl("logs", "ticker", "-c", "nope"),
      /container nope is not valid for pod ticker/,
    );
  });

  test("the node proxy reaches the kubelet; without a client certificate it answers 401", async () => {
    assert.equal(await kubectl("get", "--raw", "/api/v1/nodes/node-1/proxy/healthz"), "ok");
    const pods = JSON.parse(await kubectl("get", "--raw", "/api/v1/nodes/node-1/proxy/pods")) as {
      items: Pod[];
    };
    assert.deepEqual(pods.items.map((p) => p.metadata?.name).sort(), ["crasher", "ticker"]);
    const anonymous = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: nodeIp, port: 10250, path: "/pods", rejectUnauthorized: false }, (res) => {
        let body = "";
        res.on("data", (d: Buffer) => {
          body += d.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
    assert.deepEqual(anonymous, { status: 401, body: "Unauthorized" });
  });
});
