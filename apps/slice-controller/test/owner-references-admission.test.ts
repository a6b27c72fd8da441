// The program in-process on its ServiceAccount, authorized only by deploy/rbac.yaml, against a kube-apiserver with
// the OwnerReferencesPermissionEnforcement admission plugin on. Every slice names its owner (the Service, or for
// mirrored slices the Endpoints) with blockOwnerDeletion, which that plugin admits only from users who may update
// the owner's finalizers: deploy/rbac.yaml grants that as upstream's roles do. The last case takes the finalizers
// rules away and shows the same create refused, so the rules are needed, not just present.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ApiError, discardLogger, endpointSlices, HttpRestClient, loadKubeConfig } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { applyManifests, applyOrder, type KubeObject, readManifests } from "@switchyard/lab/testing";
import type { EndpointSlice } from "@switchyard/slice-controller";
import {
  missingControlPlane,
  serviceAccountToken,
  startControlPlane,
  type TestControlPlane,
} from "@switchyard/testbed";
import { type App, DEFAULT_FLAGS, startApp } from "../src/index.js";
import { Api, createNamespace, createNode, createPod, createService, slicesOf } from "./helpers.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const SA = { namespace: "kube-system", name: "switchyard-slice-controller" };
const rbac = applyOrder(
  readManifests(root, ["apps/slice-controller/deploy"]).filter((o) => o.kind !== "Deployment"),
);
const isFinalizersRule = (rule: { resources?: string[] }) =>
  (rule.resources ?? []).some((r) => r.endsWith("/finalizers"));

/** A kubeconfig that authenticates as the ServiceAccount with a bound token, as in-cluster config would. */
function serviceAccountKubeconfig(dir: string, cp: TestControlPlane, token: string): string {
  const path = join(dir, "sa.kubeconfig");
  const ca = join(cp.stateDir, "pki", "ca.crt");
  writeFileSync(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{name: c, cluster: {server: '${cp.server}', certificate-authority: '${ca}'}}]`,
      `users: [{name: sa, user: {token: '${token}'}}]`,
      "contexts: [{name: sa, context: {cluster: c, user: sa}}]",
      "current-context: sa",
    ].join("\n"),
  );
  return path;
}

function ownedSlice(name: string, service: { name: string; uid: string }): EndpointSlice {
  return {
    metadata: {
      name,
      labels: { "kubernetes.io/service-name": service.name },
      ownerReferences: [
        { apiVersion: "v1", kind: "Service", name: service.name, uid: service.uid, blockOwnerDeletion: true },
      ],
    },
    addressType: "IPv4",
    endpoints: [],
  } as EndpointSlice;
}

describe("slices with blockOwnerDeletion under OwnerReferencesPermissionEnforcement, on deploy/rbac.yaml alone", {
  skip: missingControlPlane(),
  timeout: 300_000,
}, () => {
  let cp: TestControlPlane;
  let api: Api;
  let app: App | undefined;
  let kubeconfig: string;
  const dir = mkdtempSync(join(tmpdir(), "sy-ownerrefs-"));

  before(async () => {
    cp = await startControlPlane({ extraAdmissionPlugins: ["OwnerReferencesPermissionEnforcement"] });
    api = new Api(cp.server, cp.stateDir);
    await applyManifests(api, rbac);
    kubeconfig = serviceAccountKubeconfig(dir, cp, await serviceAccountToken(api, SA.namespace, SA.name));
    await createNode(api, "node-a", "zone-a", "4");
    app = await startApp(
      { ...DEFAULT_FLAGS, kubeconfig, leaderElect: true, metricsBindAddress: "127.0.0.1:0" },
      { logger: discardLogger },
    );
  });

  after(async () => {
    await app?.stop();
    api?.close();
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the apiserver runs the admission plugin", async () => {
    const args = cp.state.processes.find((p) => p.name === "kube-apiserver")?.args ?? [];
    assert.ok(
      args.includes("--enable-admission-plugins=OwnerReferencesPermissionEnforcement"),
      args.join(" "),
    );
  });

  test("the EndpointSlice controller's slices are admitted, owned by their Service", async () => {
    await createNamespace(api, "shop");
    const svc = await createService(api, "shop", "web", { selector: { app: "web" }, ports: [{ port: 80 }] });
    await createPod(api, "shop", { name: "web-0", node: "node-a", ips: ["10.1.0.1"] });
    const slices = await eventually("a slice of shop/web with the Pod", async () => {
      const found = await slicesOf(api, "shop", "web");
      return found.some((s) => s.endpoints?.some((e) => e.addresses.includes("10.1.0.1")))
        ? found
        : undefined;
    });
    for (const slice of slices) {
      assert.deepEqual(
        (slice.metadata?.ownerReferences ?? []).map((r) => [r.kind, r.name, r.uid, r.blockOwnerDeletion]),
        [["Service", "web", svc.metadata?.uid, true]],
      );
    }
  });

  test("the mirroring controller's slices are admitted, owned by their Endpoints", async () => {
    await createNamespace(api, "legacy");
    await createService(api, "legacy", "db", { ports: [{ port: 5432 }] });
    const ep = await api.post<KubeObject & { metadata: { uid?: string } }>(
      "/api/v1/namespaces/legacy/endpoints",
      {
        metadata: { name: "db" },
        subsets: [{ addresses: [{ ip: "10.2.0.1" }], ports: [{ port: 5432 }] }],
      },
    );
    const slices = await eventually("a mirrored slice of legacy/db", async () => {
      const found = await slicesOf(api, "legacy", "db");
      return found.length > 0 ? found : undefined;
    });
    assert.deepEqual(
      (slices[0]?.metadata?.ownerReferences ?? []).map((r) => [r.kind, r.name, r.uid, r.blockOwnerDeletion]),
      [["Endpoints", "db", ep.metadata.uid, true]],
    );
  });

  test("without the finalizers rules the plugin refuses the same create", async () => {
    await app?.stop();
    app = undefined;
    const client = new HttpRestClient(loadKubeConfig({ kubeconfig }));
    const svc = await createService(api, "shop", "probe", { ports: [{ port: 80 }] });
    const owner = { name: "probe", uid: svc.metadata?.uid ?? "" };
    // With deploy/rbac.yaml as shipped the ServiceAccount may create it.
    await client.create(endpointSlices, ownedSlice("probe-allowed", owner), { namespace: "shop" });

    const withoutFinalizers = rbac.map((o) =>
      o.kind === "ClusterRole"
        ? { ...o, rules: (o.rules as { resources?: string[] }[]).filter((r) => !isFinalizersRule(r)) }
        : o,
    );
    await applyManifests(api, withoutFinalizers);
    const refusal = await eventually("a refusal once the RBAC change is seen", async () => {
      try {
        await client.create(endpointSlices, ownedSlice(`probe-denied-${Date.now()}`, owner), {
          namespace: "shop",
        });
        return undefined;
      } catch (err) {
        if (err instanceof ApiError && err.code === 403) return err;
        throw err;
      }
    });
    assert.match(refusal.message, /cannot set blockOwnerDeletion/);
  });
});
