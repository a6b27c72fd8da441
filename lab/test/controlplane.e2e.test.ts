// The control plane as a workshop attendee drives it: the switchyard-lab CLI and kubectl, real processes.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { request as httpsRequest } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { missingControlPlane } from "@switchyard/testbed";
import { freePort, isOurs, pkiPaths, probe, readState } from "@switchyard/testbed/controlplane";
import { resolveBinary } from "@switchyard/testbed/upstream";

const run = promisify(execFile);
const cli = join(import.meta.dirname, "..", "bin", "switchyard-lab.js");
const skip = missingControlPlane(["kube-controller-manager", "kube-scheduler", "kubectl"]);

async function lab(args: string[], env: NodeJS.ProcessEnv = process.env) {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args], { env, timeout: 180_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

async function portFlags(): Promise<string[]> {
  return [
    "--apiserver-port",
    String(await freePort()),
    "--etcd-port",
    String(await freePort()),
    "--etcd-peer-port",
    String(await freePort()),
    "--controller-manager-port",
    String(await freePort()),
    "--scheduler-port",
    String(await freePort()),
  ];
}

describe("switchyard-lab controlplane", { skip }, () => {
  const stateDir = mkdtempSync(join(tmpdir(), "sy-cp-e2e-"));
  let kubeconfig = "";
  const kubectl = (...args: string[]) =>
    run(resolveBinary("kubectl").path ?? "kubectl", ["--kubeconfig", kubeconfig, ...args], {
      timeout: 60_000,
    });

  const pki = pkiPaths(join(stateDir, "pki"));
  const etcdUrl = () => `https://127.0.0.1:${readState(stateDir)?.options.ports.etcdClient}`;

  before(async () => {
    // A state folder someone made with the default mode: up must tighten it.
    chmodSync(stateDir, 0o755);
    const r = await lab(["controlplane", "up", "--state-dir", stateDir, ...(await portFlags())]);
    assert.equal(r.code, 0, r.stderr);
    const match = /^kubeconfig: (.+)$/m.exec(r.stdout);
    assert.ok(match?.[1], `no kubeconfig path printed:\n${r.stdout}`);
    kubeconfig = match[1];
  });

  after(async () => {
    await lab(["controlplane", "down", "--state-dir", stateDir]);
  });

  test("/readyz answers ok through kubectl with the printed kubeconfig", async () => {
    const { stdout } = await kubectl("get", "--raw", "/readyz");
    assert.equal(stdout.trim(), "ok");
  });

  test("the apiserver reports the pinned Kubernetes version", async () => {
    const { stdout } = await kubectl("version", "-o", "json");
    const version = JSON.parse(stdout) as { serverVersion: { gitVersion: string } };
    const { readVersions } = await import("@switchyard/testbed/upstream");
    assert.equal(version.serverVersion.gitVersion, readVersions().kubernetes);
  });

  test("kubectl get ns lists default and kube-system", async () => {
    const { stdout } = await kubectl("get", "ns", "-o", "name");
    assert.match(stdout, /^namespace\/default$/m);
    assert.match(stdout, /^namespace\/kube-system$/m);
  });

  test("a Deployment gets a ReplicaSet: the controller-manager works", async () => {
    await kubectl("create", "deployment", "hello", "--image=registry.k8s.io/pause:3.10", "--replicas=2");
    const deadline = Date.now() + 60_000;
    let names = "";
    while (Date.now() < deadline) {
      names = (await kubectl("get", "replicasets", "-l", "app=hello", "-o", "name")).stdout.trim();
      if (names) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.match(names, /^replicaset\.apps\/hello-/);
  });

  test("the endpointslice controllers are off: a Service with a selector gets no slice from upstream", async () => {
    await kubectl("create", "service", "clusterip", "hello", "--tcp=80:8080");
    await new Promise((r) => setTimeout(r, 3000));
    const { stdout } = await kubectl(
      "get",
      "endpointslices",
      "-l",
      "kubernetes.io/service-name=hello",
      "-o",
      "name",
    );
    assert.equal(stdout.trim(), "");
  });

  test("status shows every component running and healthy", async () => {
    const r = await lab(["controlplane", "status", "--state-dir", stateDir]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    for (const name of ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"]) {
      assert.match(r.stdout, new RegExp(`^${name}\\s+pid \\d+\\s+running\\s+200`, "m"));
    }
  });

  test("files after up: the state folder (0755 before) and pki/ 0700, every key and kubeconfig 0600", () => {
    const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
    assert.equal(mode(stateDir), "700");
    assert.equal(mode(pki.dir), "700");
    assert.equal(mode(join(pki.dir, "etcd")), "700");
    const keys = readdirSync(pki.dir, { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".key"),
    );
    assert.ok(keys.includes("sa.key") && keys.includes("etcd/ca.key"), keys.join(" "));
    for (const key of keys) assert.equal(mode(join(pki.dir, key)), "600", key);
    for (const kubeconfig of ["admin", "controller-manager", "scheduler"])
      assert.equal(mode(join(stateDir, `${kubeconfig}.kubeconfig`)), "600", kubeconfig);
  });

  test("etcd serves https only and wants a client certificate of its own CA", async () => {
    const etcdCa = { ca: pki.etcd.caCert };
    const healthy = await probe(`${etcdUrl()}/health`, { ...etcdCa, ...pki.etcd.healthcheckClient });
    assert.deepEqual(healthy, { status: 200, body: '{"health":"true","reason":""}' });
    // Without a certificate the handshake fails: nothing is answered.
    const noCert = await new Promise<string>((resolve) => {
      const req = httpsRequest(`${etcdUrl()}/health`, { ca: readFileSync(pki.etcd.caCert) }, (res) =>
        resolve(`answered ${res.statusCode}`),
      );
      req.on("error", (err) => resolve(err.message));
      req.end();
    });
    assert.match(noCert, /alert certificate required/);
    // The cluster CA's admin (system:masters) is nobody to etcd.
    const admin = await probe(`${etcdUrl()}/health`, { ...etcdCa, ...pki.clients.admin });
    assert.equal(admin.status, 0, admin.body);
    assert.match(admin.body, /unknown ca/);
    const plain = await probe(`${etcdUrl().replace("https:", "http:")}/health`);
    assert.equal(plain.status, 0, `plain http answered: ${plain.body}`);
    assert.match(plain.body, /socket hang up|ECONNRESET/);
  });

  test("the apiserver stores in etcd over mutual TLS: its etcd check passes, a namespace is in etcd", async () => {
    assert.equal((await kubectl("get", "--raw", "/readyz/etcd")).stdout.trim(), "ok");
    const args = readState(stateDir)?.processes.find((p) => p.name === "kube-apiserver")?.args ?? [];
    assert.ok(args.includes(`--etcd-servers=${etcdUrl()}`), args.join(" "));
    await kubectl("create", "namespace", "stored-over-tls");
    const key = Buffer.from("/registry/namespaces/stored-over-tls").toString("base64");
    const range = await probe(
      `${etcdUrl()}/v3/kv/range`,
      { ca: pki.etcd.caCert, ...pki.etcd.apiserverClient },
      5000,
      JSON.stringify({ key, keys_only: true }),
    );
    assert.equal(range.status, 200, range.body);
    assert.equal((JSON.parse(range.body) as { count?: string }).count, "1", range.body);
  });

  test("a second up on the same state folder is refused in one line", async () => {
    const r = await lab(["controlplane", "up", "--state-dir", stateDir, ...(await portFlags())]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^switchyard-lab: a control plane is already running from .* \(etcd pid \d+\)/);
  });

  test("down stops every process (checked by pid) and removes the state", async () => {
    const state = readState(stateDir);
    assert.ok(state);
    const r = await lab(["controlplane", "down", "--state-dir", stateDir]);
    assert.equal(r.code, 0, r.stderr);
    for (const p of state.processes) assert.equal(isOurs(p), false, `${p.name} pid ${p.pid} still running`);
    assert.equal(existsSync(stateDir), false);
  });
});

describe("switchyard-lab controlplane: bad cases, one line each", { skip: missingControlPlane() }, () => {
  test("a taken port names the port and the flag, and starts nothing", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen({ host: "127.0.0.1", port: 0 }, r));
    const taken = (server.address() as { port: number }).port;
    const stateDir = mkdtempSync(join(tmpdir(), "sy-cp-bad-"));
    try {
      const flags = await portFlags();
      flags[1] = String(taken);
      const r = await lab(["controlplane", "up", "--state-dir", stateDir, ...flags]);
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr.trim(),
        `switchyard-lab: port ${taken} on 127.0.0.1 (kube-apiserver) is in use by another process; pick another with --apiserver-port`,
      );
      assert.equal(readState(stateDir), undefined);
    } finally {
      server.close();
    }
  });

  test("a missing binary is named, with the ways to get it", async () => {
    const env = { ...process.env, SWITCHYARD_KUBE_APISERVER: "/nonexistent/kube-apiserver" };
    const r = await lab(
      [
        "controlplane",
        "up",
        "--state-dir",
        mkdtempSync(join(tmpdir(), "sy-cp-bad-")),
        "--no-controller-manager",
        "--no-scheduler",
      ],
      env,
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^switchyard-lab: missing upstream binaries: kube-apiserver\./);
    assert.match(r.stderr, /SWITCHYARD_KUBE_APISERVER=<path>/);
  });

  test("an etcd data folder locked by another process is refused", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "sy-cp-bad-"));
    const db = join(stateDir, "etcd", "member", "snap");
    mkdirSync(db, { recursive: true });
    writeFileSync(join(db, "db"), "");
    // Another process holds the lock etcd would take, as a stray etcd on the same folder would.
    const holder = spawn("flock", ["--exclusive", join(db, "db"), "sleep", "60"], { stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 300));
    try {
      const r = await lab([
        "controlplane",
        "up",
        "--state-dir",
        stateDir,
        "--no-controller-manager",
        "--no-scheduler",
        ...(await portFlags()),
      ]);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr.trim(),
        /^switchyard-lab: etcd data folder .*\/etcd is locked by another etcd process; stop it or use another --state-dir$/,
      );
    } finally {
      holder.kill();
    }
  });

  test("an apiserver that is not ready in time: the error shows the last lines of its log, nothing is left running", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "sy-cp-bad-"));
    const r = await lab([
      "controlplane",
      "up",
      "--state-dir",
      stateDir,
      "--no-controller-manager",
      "--no-scheduler",
      "--timeout",
      "0.3",
      ...(await portFlags()),
    ]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^switchyard-lab: (etcd|kube-apiserver \/readyz) not ready within 0.3s; last lines of .*\.log:/m,
    );
    const state = readState(stateDir);
    for (const p of state?.processes ?? []) assert.equal(isOurs(p), false, `${p.name} left running`);
  });

  test("a component that dies at start-up is named with its own error line", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "sy-cp-bad-"));
    // Two IPv4 ranges: each is a CIDR (the command's own check passes), the apiserver refuses the pair.
    const flags = [
      "--no-controller-manager",
      "--no-scheduler",
      "--service-cidr",
      "10.96.0.0/16,10.97.0.0/16",
    ];
    const r = await lab(["controlplane", "up", "--state-dir", stateDir, ...flags, ...(await portFlags())]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^switchyard-lab: kube-apiserver exited during start-up: .*service-cluster-ip-range\[0\] and --service-cluster-ip-range\[1\] must be of different IP family.*; last lines of/m,
    );
    for (const p of readState(stateDir)?.processes ?? [])
      assert.equal(isOurs(p), false, `${p.name} left running`);
  });

  test("unknown flags and bad values are usage errors naming the flag", async () => {
    let r = await lab(["controlplane", "up", "--service-cidr", "10.96.0.0/33"]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^switchyard-lab: controlplane up: --service-cidr takes CIDRs separated by commas, got "10\.96\.0\.0\/33"\n/,
    );
    r = await lab(["controlplane", "up", "--nope"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^switchyard-lab: controlplane up: unknown flag --nope\n/);
    r = await lab(["controlplane", "up", "--apiserver-port", "99999"]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr.trim(),
      'switchyard-lab: controlplane up: --apiserver-port must be a port number 1-65535, got "99999"\n' +
        "Usage: switchyard-lab controlplane up [flags] (switchyard-lab controlplane up --help for more)",
    );
  });
});
