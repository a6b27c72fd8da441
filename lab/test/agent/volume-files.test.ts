// Secret, downward-API and projected volumes planned (volumes.ts) and turned into files (volume-files.ts) from
// API objects as the apiserver sends them, and the downward API's resource values (pod-files.ts).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ApiError, type HttpRestClient } from "@switchyard/kube";
import type { Pod } from "kubernetes-types/core/v1.js";
import { resourceFieldValue } from "../../src/agent/pod-files.js";
import { fileSetFiles, prepareVolumes } from "../../src/agent/volume-files.js";
import { planVolumes } from "../../src/agent/volumes.js";

const pod: Pod = {
  metadata: { name: "web", namespace: "shop", uid: "u-1", labels: { tier: "front", app: "web" } },
  spec: {
    serviceAccountName: "robot",
    containers: [
      {
        name: "app",
        resources: { limits: { cpu: "250m", memory: "64Mi" }, requests: { cpu: "100m" } },
        volumeMounts: [
          { name: "creds", mountPath: "/creds" },
          { name: "info", mountPath: "/info" },
          { name: "all", mountPath: "/all" },
          { name: "kube-api-access-x", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
        ],
      },
    ],
    volumes: [
      { name: "creds", secret: { secretName: "db", items: [{ key: "password", path: "pw", mode: 0o400 }] } },
      {
        name: "info",
        downwardAPI: {
          items: [
            { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
            {
              path: "cpu",
              resourceFieldRef: { containerName: "app", resource: "limits.cpu", divisor: "1m" },
            },
          ],
        },
      },
      {
        name: "all",
        projected: {
          defaultMode: 0o440,
          sources: [
            { configMap: { name: "settings" } },
            { secret: { name: "missing", optional: true } },
            { serviceAccountToken: { path: "token", audience: "vault", expirationSeconds: 600 } },
          ],
        },
      },
      { name: "kube-api-access-x", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } },
    ],
  },
};

/** The API as the apiserver answers: a Secret's data base64, a ConfigMap's data and binaryData, 404s. */
function fakeClient(requests: unknown[]): HttpRestClient {
  const call = async (method: string, path: string, body?: unknown) => {
    requests.push({ method, path, body });
    if (path === "/api/v1/namespaces/shop/secrets/db")
      return { data: { password: Buffer.from("s3cret").toString("base64"), other: "eA==" } };
    if (path === "/api/v1/namespaces/shop/configmaps/settings")
      return { data: { mode: "fast" }, binaryData: { blob: Buffer.from([1, 2]).toString("base64") } };
    if (path === "/api/v1/namespaces/shop/serviceaccounts/robot/token") return { status: { token: "jwt" } };
    throw new ApiError(404, "NotFound", `${path} not found`);
  };
  return { call } as unknown as HttpRestClient;
}

describe("file-set volumes", () => {
  test("planned read-only, each with its sources; the ServiceAccount's own volume is left to the agent", () => {
    const container = pod.spec?.containers[0];
    assert.ok(container);
    const plan = planVolumes(pod, container, "/p");
    assert.deepEqual(
      plan.fileSets.map((f) => [f.dir, f.sources.map((s) => s.kind), f.defaultMode.toString(8)]),
      [
        ["/p/volumes/creds", ["secret"], "644"],
        ["/p/volumes/info", ["downwardAPI"], "644"],
        ["/p/volumes/all", ["configMap", "secret", "serviceAccountToken"], "440"],
      ],
    );
    assert.ok(plan.mounts.every((m) => m.readOnly));
    assert.deepEqual(plan.unsupported, []);
  });

  test("written as the kubelet writes them: decoded secrets, downward-API text, a token for its audience", async () => {
    const container = pod.spec?.containers[0];
    assert.ok(container);
    const dir = mkdtempSync(join(tmpdir(), "switchyard-volumes-"));
    const requests: unknown[] = [];
    try {
      const plan = planVolumes(pod, container, dir);
      await prepareVolumes(plan, { client: fakeClient(requests), pod, container: "app" });
      const read = (path: string) => readFileSync(join(dir, "volumes", path), "utf8");
      const mode = (path: string) => (statSync(join(dir, "volumes", path)).mode & 0o777).toString(8);
      assert.equal(read("creds/pw"), "s3cret");
      assert.equal(mode("creds/pw"), "400");
      // The kubelet's 0755: a non-root container reads a file by its own mode (the pod's folder keeps the host out).
      assert.equal(mode("creds"), "755");
      assert.equal(read("info/labels"), 'app="web"\ntier="front"');
      assert.equal(read("info/cpu"), "250");
      assert.equal(read("all/mode"), "fast");
      assert.deepEqual([...readFileSync(join(dir, "volumes", "all/blob"))], [1, 2]);
      assert.equal(read("all/token"), "jwt");
      assert.equal(mode("all/token"), "440");
      const tokenRequest = requests.find((r) => (r as { path: string }).path.endsWith("/token")) as {
        body: { spec: Record<string, unknown> };
      };
      assert.deepEqual(tokenRequest.body.spec.audiences, ["vault"]);
      assert.equal(tokenRequest.body.spec.expirationSeconds, 600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a missing Secret that is not optional stops the container with the reason", async () => {
    const set = {
      dir: "/x",
      defaultMode: 0o644,
      sources: [{ kind: "secret" as const, name: "gone", items: undefined, optional: false }],
    };
    await assert.rejects(
      fileSetFiles(set, { client: fakeClient([]), pod, container: "app" }),
      /secret shop\/gone: .*not found/,
    );
  });
});

describe("the downward API's resource values", () => {
  const ref = (resource: string, divisor?: string) => ({ resource, ...(divisor ? { divisor } : {}) });
  test("limits, requests, divisors, and the node's allocatable for a limit not set", () => {
    assert.equal(resourceFieldValue(pod, ref("limits.cpu"), "app"), "1", "250m rounds up to one core");
    assert.equal(resourceFieldValue(pod, ref("limits.cpu", "1m"), "app"), "250");
    assert.equal(resourceFieldValue(pod, ref("requests.cpu", "1m"), "app"), "100");
    assert.equal(resourceFieldValue(pod, ref("limits.memory", "1Mi"), "app"), "64");
    assert.equal(resourceFieldValue(pod, ref("requests.memory"), "app"), "0");
    assert.equal(resourceFieldValue(pod, ref("limits.ephemeral-storage", "1Gi"), "app"), "10");
    assert.equal(resourceFieldValue(pod, ref("limits.gpu"), "app"), "");
  });
});
