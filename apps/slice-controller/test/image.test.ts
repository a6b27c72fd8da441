// The switchyard/slice-controller image on a real Docker engine, as deploy/deployment.yaml runs it, against the
// real control plane with no admin credentials: the ServiceAccount, ClusterRole and Role with their bindings
// come from deploy/rbac.yaml through the API, the token from the TokenRequest API, and token, ca.crt and
// namespace are mounted at /var/run/secrets/kubernetes.io/serviceaccount as a kubelet mounts them, with
// KUBERNETES_SERVICE_HOST/PORT set as for a pod. The container runs under the Deployment's securityContext
// (uid 65532, capabilities drop ALL, no privilege escalation, read-only root, 512Mi limit) with its args, on
// the host's network (where the test apiserver listens, on loopback). No kube-controller-manager runs, so every
// EndpointSlice seen was written by the image. A second case takes the ClusterRoleBindings away: the container
// log must name the refusal.
// Skips only when no engine can be had or the upstream binaries are missing, with that reason.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { eventually } from "@switchyard/kube/testing";
import { applyManifests, applyOrder, type KubeObject, readManifests } from "@switchyard/lab/testing";
import {
  Api,
  buildImage,
  containerLog,
  createNamespace,
  createNode,
  createPod,
  createService,
  docker,
  dockerEngine,
  listSlices,
  missingControlPlane,
  removeContainers,
  serviceAccountFolder,
  serviceAccountToken,
  startControlPlane,
  type TestControlPlane,
} from "@switchyard/testbed";
import { freePort } from "@switchyard/testbed/controlplane";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const engine = dockerEngine();
const skip = engine.skip ?? missingControlPlane();
const image = "switchyard/slice-controller:dev";
const SA = { namespace: "kube-system", name: "switchyard-slice-controller" };
const MANAGED_BY = "endpointslice.kubernetes.io/managed-by";

const manifests = readManifests(root, ["apps/slice-controller/deploy"]);
const rbac = applyOrder(manifests.filter((o) => o.kind !== "Deployment"));
interface Container {
  args?: string[];
  securityContext?: { capabilities?: { drop?: string[] } };
  resources?: { limits?: { memory?: string } };
}
interface Deployment {
  spec: { template: { spec: { containers: Container[]; securityContext?: { runAsUser?: number } } } };
}
const deployment = manifests.find((o) => o.kind === "Deployment") as unknown as Deployment;

// What after() removes, whatever a failure left behind.
const started: string[] = [];
const folders: string[] = [];

// The Deployment's container, with a fresh token; only the listen ports differ (free ones: the host's
// network is shared with whatever else runs here).
async function runController(api: Api, plane: TestControlPlane, name: string): Promise<{ healthz: number }> {
  const token = await serviceAccountToken(api, SA.namespace, SA.name);
  const secrets = serviceAccountFolder(token, join(plane.stateDir, "pki", "ca.crt"), SA.namespace);
  folders.push(secrets);
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0] as Container;
  const [metrics, healthz] = [await freePort(), await freePort()];
  const args = (container.args ?? []).map((a) =>
    a.startsWith("--metrics-bind-address=")
      ? `--metrics-bind-address=127.0.0.1:${metrics}`
      : a.startsWith("--healthz-bind-address=")
        ? `--healthz-bind-address=127.0.0.1:${healthz}`
        : a,
  );
  const server = new URL(plane.server);
  started.push(name);
  docker(engine, [
    "run",
    "-d",
    "--name",
    name,
    "--network",
    "host",
    "--user",
    `${pod.securityContext?.runAsUser ?? 65532}`,
    ...(container.securityContext?.capabilities?.drop ?? []).flatMap((c) => ["--cap-drop", c]),
    "--security-opt",
    "no-new-privileges",
    "--read-only",
    "--memory",
    (container.resources?.limits?.memory ?? "512Mi").replace(/Mi$/, "m"),
    "-e",
    `KUBERNETES_SERVICE_HOST=${server.hostname}`,
    "-e",
    `KUBERNETES_SERVICE_PORT=${server.port}`,
    "-v",
    `${secrets}:/var/run/secrets/kubernetes.io/serviceaccount:ro`,
    image,
    ...args,
  ]);
  return { healthz };
}

describe("switchyard/slice-controller image on its ServiceAccount", { skip, timeout: 600_000 }, () => {
  const prefix = `sy-slices-image-${process.pid}`;
  let cp: TestControlPlane | undefined;
  let api: Api;

  before(async () => {
    buildImage(engine, "slice-controller");
    cp = await startControlPlane();
    api = new Api(cp.server, cp.stateDir);
    await applyManifests(api, rbac);
    await createNode(api, "node-a", "zone-a", "4");
  });

  after(async () => {
    removeContainers(engine, started);
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
    api?.close();
    await cp?.stop();
  });

  test("writes EndpointSlices for a Service's ready Pods", async () => {
    const name = `${prefix}-ok`;
    const { healthz } = await runController(api, cp as TestControlPlane, name);
    const log = () => containerLog(engine, name);
    await createNamespace(api, "shop");
    await createService(api, "shop", "web", {
      selector: { app: "web" },
      ports: [{ name: "http", port: 80 }],
    });
    for (const [i, ip] of ["10.1.0.1", "10.1.0.2"].entries())
      await createPod(api, "shop", { name: `web-${i}`, node: "node-a", ips: [ip] });
    const slices = await eventually(
      "EndpointSlices of shop/web with both Pods",
      async () => {
        const { slices } = await listSlices(api, "shop", "web");
        const ready = slices.flatMap((s) =>
          s.endpoints.filter((e) => e.conditions?.ready).flatMap((e) => e.addresses),
        );
        return ready.sort().join(",") === "10.1.0.1,10.1.0.2" ? slices : undefined;
      },
      { describe: async () => `container log:\n${log()}` },
    );
    for (const slice of slices)
      assert.equal(slice.metadata?.labels?.[MANAGED_BY], "endpointslice-controller.k8s.io", log());
    // It leads through the Lease deploy/rbac.yaml's Role allows, in the namespace the Deployment names.
    const lease = await api.get<{ spec?: { holderIdentity?: string } }>(
      `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${SA.name}`,
    );
    assert.ok(lease.spec?.holderIdentity, `no holder of the Lease\n${log()}`);
    for (const path of ["/healthz", "/readyz"]) {
      const res = await fetch(`http://127.0.0.1:${healthz}${path}`);
      assert.equal(res.status, 200, `${path}: ${await res.text()}\n${log()}`);
    }
    removeContainers(engine, [name]);
  });

  test("without its ClusterRoleBindings the log names the refusal", async () => {
    const bindings = rbac.filter((o: KubeObject) => o.kind === "ClusterRoleBinding");
    assert.ok(bindings.length > 0, "deploy/rbac.yaml has ClusterRoleBindings");
    for (const binding of bindings)
      await api.delete(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${binding.metadata.name}`);
    const name = `${prefix}-forbidden`;
    await runController(api, cp as TestControlPlane, name);
    const user = `system:serviceaccount:${SA.namespace}:${SA.name}`;
    await eventually(
      "a 403 in the container log",
      async () => {
        const log = containerLog(engine, name);
        // The apiserver's words, passed on: who was refused what (services, pods, nodes or endpointslices).
        const refused =
          /forbidden.*cannot (list|watch) resource \\?"(services|pods|nodes|endpointslices)\\?"/;
        return log.includes("403 Forbidden") && refused.test(log) && log.includes(user) ? log : undefined;
      },
      { describe: async () => `container log:\n${containerLog(engine, name)}` },
    );
  });
});
