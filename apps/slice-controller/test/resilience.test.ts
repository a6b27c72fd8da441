// Churn under failure: two replicas of the program (child processes, leader election on a Lease)
// with the leader killed mid-churn, then SIGTERMed mid-burst of Services, then the apiserver itself
// killed and restarted mid-churn. After each, the slices must hold exactly the endpoints the Pods call
// for: none lost, none stale, none twice.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { discardLogger } from "@switchyard/kube";
import { eventually, prng } from "@switchyard/kube/testing";
import type { EndpointSlice } from "@switchyard/slice-controller";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import { resolveBinary } from "@switchyard/testbed/upstream";
import type { Lease } from "kubernetes-types/coordination/v1.js";
import type { Event as CoreEvent } from "kubernetes-types/core/v1.js";
import { DEFAULT_FLAGS, startApp } from "../src/index.js";
import { Churn, expectedLines, mismatch, namespaceMismatch } from "./churn.js";
import {
  Api,
  createNamespace,
  createNode,
  createPods,
  createService,
  deletePod,
  endpointLines,
  SLICES,
  setPodReady,
  slicesOf,
  summary,
} from "./helpers.js";

const BIN = fileURLToPath(new URL("../bin/switchyard-slice-controller.js", import.meta.url));
const RBAC = fileURLToPath(new URL("../deploy/rbac.yaml", import.meta.url));
const NODES = ["node-a", "node-b", "node-c"];
const LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/switchyard-slice-controller";

interface Replica {
  child: ChildProcess;
  identity: Promise<string>;
  exited: Promise<number | null>;
  stderr: string[];
}

function startReplica(kubeconfig: string, extraArgs: readonly string[] = []): Replica {
  const child = spawn(
    process.execPath,
    [
      BIN,
      `--kubeconfig=${kubeconfig}`,
      "--leader-elect-lease-duration=4s",
      "--leader-elect-renew-deadline=3s",
      "--leader-elect-retry-period=500ms",
      "--metrics-bind-address=127.0.0.1:0",
      ...extraArgs,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const stderr: string[] = [];
  const identity = new Promise<string>((resolve, reject) => {
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderr.push(chunk);
      for (const line of chunk.split("\n")) {
        if (line.includes('"msg":"started"')) resolve((JSON.parse(line) as { identity: string }).identity);
      }
    });
    child.once("exit", (code) =>
      reject(new Error(`replica exited with ${code} before starting: ${stderr.join("")}`)),
    );
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, identity, exited, stderr };
}

describe("resilience", { skip: missingControlPlane() }, () => {
  let cp: TestControlPlane;
  let api: Api;
  const replicas: Replica[] = [];

  const converged = (ns: string) =>
    eventually(
      `slices of ${ns}/web to match its Pods`,
      async () => {
        const slices = await slicesOf(api, ns, "web");
        return mismatch(slices, await expectedLines(api, ns), 100) === undefined ? slices : undefined;
      },
      {
        describe: async () => {
          const slices = await slicesOf(api, ns, "web");
          return `${mismatch(slices, await expectedLines(api, ns), 100)}\n${summary(slices)}`;
        },
      },
    );

  before(async () => {
    cp = await startControlPlane();
    api = new Api(cp.server, cp.stateDir);
    for (const [i, name] of NODES.entries()) await createNode(api, name, `zone-${i}`, "4");
  });

  after(async () => {
    for (const r of replicas) if (r.child.exitCode === null) r.child.kill("SIGKILL");
    api?.close();
    await cp?.stop();
  });

  test("two replicas, leader killed mid-churn of 500 Pod changes: the standby finishes the job", async () => {
    await createNamespace(api, "race");
    await createService(api, "race", "web", {
      selector: { app: "web" },
      ports: [{ port: 80, targetPort: 8080 }],
    });
    replicas.push(startReplica(cp.kubeconfigPath), startReplica(cp.kubeconfigPath));
    const identities = await Promise.all(replicas.map((r) => r.identity));

    const churn = new Churn(api, "race", NODES, "10.20", prng(7));
    for (let i = 0; i < 120; i++) await churn.create();
    await churn.run(250);
    const leader = await eventually("a leader", async () => {
      const holder = (await api.get<Lease>(LEASE)).spec?.holderIdentity;
      return holder && identities.includes(holder) ? holder : undefined;
    });
    const [victim, survivor] =
      leader === identities[0] ? [replicas[0], replicas[1]] : [replicas[1], replicas[0]];
    victim?.child.kill("SIGKILL");
    await churn.run(250);

    const slices = await converged("race");
    assert.ok(
      slices.every(
        (s) =>
          s.metadata?.labels?.["endpointslice.kubernetes.io/managed-by"] ===
          "endpointslice-controller.k8s.io",
      ),
    );
    const holder = (await api.get<Lease>(LEASE)).spec?.holderIdentity;
    assert.equal(holder, await survivor?.identity);

    // A clean stop hands the Lease back and exits 0.
    survivor?.child.kill("SIGTERM");
    assert.equal(await survivor?.exited, 0);
    assert.equal((await api.get<Lease>(LEASE)).spec?.holderIdentity, "");
  });

  test("two replicas, leader SIGTERMed mid-burst of 28 Services: it stops before handing over, the standby converges them exactly", async () => {
    const ns = "burst";
    await createNamespace(api, ns);
    // Slowed to 5 writes a second, so the leader is still writing when it is told to stop.
    const slow = ["--kube-api-qps=5", "--kube-api-burst=1", "-v=4"];
    const pair = [startReplica(cp.kubeconfigPath, slow), startReplica(cp.kubeconfigPath, slow)];
    replicas.push(...pair);
    const identities = await Promise.all(pair.map((r) => r.identity));
    const leader = await eventually("a leader", async () => {
      const holder = (await api.get<Lease>(LEASE)).spec?.holderIdentity;
      return holder && identities.includes(holder) ? holder : undefined;
    });
    const [victim, survivor] = leader === identities[0] ? [pair[0], pair[1]] : [pair[1], pair[0]];
    if (!victim || !survivor) throw new Error("two replicas");

    // Pods first, then the Services selecting them: each Service is one slice to create.
    const service = (i: number) =>
      createService(api, ns, `svc-${i}`, {
        selector: { app: `svc-${i}` },
        ports: [{ port: 80, targetPort: 8080 }],
      });
    const pod = (i: number, j: number) => ({
      name: `svc-${i}-${j}`,
      node: NODES[j % NODES.length] ?? "",
      ips: [`10.50.${i}.${j + 1}`],
      labels: { app: `svc-${i}` },
    });
    await createPods(
      api,
      ns,
      Array.from({ length: 28 * 3 }, (_, n) => pod(Math.floor(n / 3), n % 3)),
    );
    await Promise.all(Array.from({ length: 24 }, (_, i) => service(i)));
    const sliced = async () =>
      new Set(
        (await api.get<{ items: EndpointSlice[] }>(`${SLICES}/namespaces/${ns}/endpointslices`)).items.map(
          (s) => s.metadata?.labels?.["kubernetes.io/service-name"],
        ),
      ).size;
    await eventually("the leader writing slices", async () => ((await sliced()) > 0 ? true : undefined));
    victim.child.kill("SIGTERM");
    const atStop = await sliced();
    assert.ok(atStop < 24, `the leader had sliced all ${atStop} Services before it was stopped`);

    // More changes while the Lease changes hands: Services added, Pods deleted and turned unready, a Service
    // deleted and created again under its name (its old slices are no longer its own).
    await Promise.all([24, 25, 26, 27].map((i) => service(i)));
    await Promise.all([0, 1, 2, 3].map((i) => deletePod(api, ns, `svc-${i}-0`, 0)));
    await Promise.all([4, 5, 6, 7].map((i) => setPodReady(api, ns, `svc-${i}-1`, [`10.50.${i}.2`], false)));
    await api.delete(`/api/v1/namespaces/${ns}/services/svc-8`);
    await service(8);

    assert.equal(await victim.exited, 0, victim.stderr.join(""));
    const log = victim.stderr.join("").split("\n");
    const released = log.findIndex((l) => l.includes('"msg":"released leader lease"'));
    assert.ok(released >= 0, `no release in ${victim.stderr.join("")}`);
    const late = log.slice(released).filter((l) => l.includes('"msg":"finished syncing Service"'));
    assert.deepEqual(late, [], "Services synced after the Lease was handed back");

    await eventually(
      "every Service's slices exactly as its Pods call for",
      async () => ((await namespaceMismatch(api, ns)) === undefined ? true : undefined),
      { describe: async () => (await namespaceMismatch(api, ns)) ?? "" },
    );
    assert.equal((await api.get<Lease>(LEASE)).spec?.holderIdentity, await survivor.identity);
    console.log(
      "SURVIVOR",
      survivor.stderr
        .join("")
        .split("\n")
        .filter((l) => /burst/.test(l)).length,
    );
    survivor.child.kill("SIGTERM");
    assert.equal(await survivor.exited, 0);
  });

  test("the apiserver killed and restarted mid-churn: the end state is still right", async () => {
    await createNamespace(api, "restart");
    await createService(api, "restart", "web", {
      selector: { app: "web" },
      ports: [{ port: 80, targetPort: 8080 }],
    });
    // In-process and without leader election: a Lease cannot be renewed while the apiserver is down.
    const app = await startApp(
      { ...DEFAULT_FLAGS, kubeconfig: cp.kubeconfigPath, leaderElect: false, metricsBindAddress: undefined },
      { logger: discardLogger },
    );
    try {
      const churn = new Churn(api, "restart", NODES, "10.30", prng(11));
      for (let i = 0; i < 150; i++) await churn.create();
      await churn.run(150);
      await cp.killApiserver();
      await cp.startApiserver();
      await churn.run(150);
      await converged("restart");
    } finally {
      await app.stop();
    }
  });

  test("runs with only the permissions deploy/rbac.yaml grants", {
    skip: missingControlPlane(["kubectl"]),
  }, async () => {
    const kubectl = resolveBinary("kubectl").path ?? "kubectl";
    const admin = ["--kubeconfig", cp.kubeconfigPath];
    execFileSync(kubectl, [...admin, "apply", "-f", RBAC], { stdio: "pipe" });
    const token = execFileSync(
      kubectl,
      [...admin, "-n", "kube-system", "create", "token", "switchyard-slice-controller"],
      {
        encoding: "utf8",
      },
    ).trim();
    const kubeconfig = join(mkdtempSync(join(tmpdir(), "slice-controller-sa-")), "kubeconfig");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          {
            name: "lab",
            cluster: { server: cp.server, "certificate-authority": join(cp.stateDir, "pki", "ca.crt") },
          },
        ],
        users: [{ name: "sa", user: { token } }],
        contexts: [{ name: "sa", context: { cluster: "lab", user: "sa" } }],
        "current-context": "sa",
      }),
    );
    const app = await startApp(
      {
        ...DEFAULT_FLAGS,
        kubeconfig,
        leaseDurationMs: 4000,
        renewDeadlineMs: 3000,
        retryPeriodMs: 500,
        metricsBindAddress: undefined,
      },
      { logger: discardLogger },
    );
    try {
      await createNamespace(api, "rbac");
      await createService(
        api,
        "rbac",
        "web",
        { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
        { annotations: { "service.kubernetes.io/topology-mode": "Auto" } },
      );
      await createPods(
        api,
        "rbac",
        [0, 1, 2].map((i) => ({ name: `web-${i}`, node: NODES[i] ?? "", ips: [`10.40.0.${i + 1}`] })),
      );
      await createService(api, "rbac", "ext", { ports: [{ port: 5432 }] });
      await api.post("/api/v1/namespaces/rbac/endpoints", {
        metadata: { name: "ext" },
        subsets: [{ addresses: [{ ip: "192.0.2.1" }], ports: [{ port: 5432 }] }],
      });
      await eventually("slices written as the ServiceAccount", async () => {
        const web = endpointLines(await slicesOf(api, "rbac", "web"));
        const ext = endpointLines(await slicesOf(api, "rbac", "ext"));
        return web.length === 3 && ext.length === 1 ? true : undefined;
      });
      assert.equal((await api.get<Lease>(LEASE)).spec?.holderIdentity, app.identity);
      await eventually("an Event written as the ServiceAccount", async () => {
        const events = await api.get<{ items: CoreEvent[] }>("/api/v1/namespaces/rbac/events");
        return events.items.some((e) => e.reason === "TopologyAwareHintsEnabled") ? true : undefined;
      });
    } finally {
      await app.stop();
    }
  });
});
