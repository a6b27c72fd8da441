import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { inClusterAccess } from "../../src/rest/in-cluster.js";
import { loadKubeConfig } from "../../src/rest/kubeconfig.js";

function kubeconfigWith(user: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: c",
    "  cluster: {server: 'https://127.0.0.1:6443', insecure-skip-tls-verify: true}",
    "users:",
    "- name: u",
    `  user: ${user}`,
    "contexts:",
    "- name: ctx",
    "  context: {cluster: c, user: u}",
    "current-context: ctx",
    "",
  ].join("\n");
}

async function authorization(path: string): Promise<unknown> {
  const kc = loadKubeConfig({ kubeconfig: path, env: {} });
  const opts: { headers: Record<string, string> } = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  return opts.headers.Authorization;
}

describe("loadKubeConfig", () => {
  test("kubectl's tokenFile (as kubeadm's kube-proxy kubeconfig has it), relative to the kubeconfig", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-kc-"));
    writeFileSync(join(dir, "token"), "abc123");
    writeFileSync(join(dir, "kubeconfig"), kubeconfigWith("{tokenFile: token}"));
    assert.equal(await authorization(join(dir, "kubeconfig")), "Bearer abc123");
  });

  test("an inline token still wins over a token file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-kc-"));
    writeFileSync(join(dir, "token"), "from-file");
    writeFileSync(join(dir, "kubeconfig"), kubeconfigWith("{token: inline, tokenFile: token}"));
    assert.equal(await authorization(join(dir, "kubeconfig")), "Bearer inline");
  });

  test("a missing file is one line naming what was tried", () => {
    assert.throws(
      () => loadKubeConfig({ kubeconfig: "/nonexistent/kubeconfig", env: {} }),
      /^Error: kubeconfig \/nonexistent\/kubeconfig does not exist$/,
    );
  });
});

describe("in-cluster configuration", () => {
  function serviceAccount(token: string): string {
    const prefix = mkdtempSync(join(tmpdir(), "sy-sa-"));
    const dir = join(prefix, "var/run/secrets/kubernetes.io/serviceaccount");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "token"), token);
    writeFileSync(join(dir, "ca.crt"), "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    writeFileSync(join(dir, "namespace"), "kube-system");
    return prefix;
  }
  const env = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };

  test("the server from KUBERNETES_SERVICE_HOST/PORT, the CA and the bearer token from the service account", async () => {
    const prefix = serviceAccount("tok-1\n");
    const access = loadKubeConfig({ env, home: "/nonexistent", inClusterPathPrefix: prefix });
    assert.equal(access.getCurrentCluster()?.server, "https://10.96.0.1:443");
    const opts: { headers?: Record<string, string>; ca?: Buffer } = {};
    await access.applyToHTTPSOptions(opts);
    assert.equal(opts.headers?.Authorization, "Bearer tok-1");
    assert.match(String(opts.ca), /BEGIN CERTIFICATE/);
    const v6 = inClusterAccess({ env: { ...env, KUBERNETES_SERVICE_HOST: "fd00::1" }, pathPrefix: prefix });
    assert.equal(v6.getCurrentCluster()?.server, "https://[fd00::1]:443");
  });

  test("a rotated token is read again after a minute, as client-go does; not on every request", async () => {
    const prefix = serviceAccount("old");
    let now = 1_000_000;
    const access = inClusterAccess({ env, pathPrefix: prefix, now: () => now });
    const token = async () => {
      const opts: { headers?: Record<string, string> } = {};
      await access.applyToHTTPSOptions(opts);
      return opts.headers?.Authorization;
    };
    const file = join(prefix, "var/run/secrets/kubernetes.io/serviceaccount/token");
    writeFileSync(file, "new");
    // The same second: the mtime may or may not have moved, so only the minute is asserted.
    now += 61_000;
    assert.equal(await token(), "Bearer new");
  });

  test("it loads without client-node: a pod on its service account never pays for that library", () => {
    // A resolve hook that refuses client-node, in a process that loads the built package (dist: no tsx).
    const dist = new URL("../../dist/index.js", import.meta.url).href;
    const run = (call: string) =>
      spawnSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          [
            'import { registerHooks } from "node:module";',
            "registerHooks({ resolve(spec, ctx, next) {",
            '  if (spec.startsWith("@kubernetes/client-node")) throw new Error("client-node was loaded");',
            "  return next(spec, ctx); } });",
            `const kube = await import(${JSON.stringify(dist)});`,
            call,
          ].join("\n"),
          serviceAccount("t"),
        ],
        { encoding: "utf8" },
      );
    const pod = run(
      `kube.loadKubeConfig({ env: ${JSON.stringify(env)}, home: "/nonexistent", inClusterPathPrefix: process.argv[1] });`,
    );
    assert.equal(pod.status, 0, pod.stderr);
    // A kubeconfig file with a token or certificate user is read without it too.
    const dir = mkdtempSync(join(tmpdir(), "sy-kc-"));
    writeFileSync(join(dir, "kubeconfig"), kubeconfigWith("{token: t}"));
    const file = run(`kube.loadKubeConfig({ kubeconfig: ${JSON.stringify(join(dir, "kubeconfig"))} });`);
    assert.equal(file.status, 0, file.stderr);
    // An exec plugin needs client-node: refused, as in an install without it, that is one line naming it.
    writeFileSync(
      join(dir, "exec"),
      kubeconfigWith("{exec: {apiVersion: client.authentication.k8s.io/v1, command: echo}}"),
    );
    const exec = run(`kube.loadKubeConfig({ kubeconfig: ${JSON.stringify(join(dir, "exec"))} });`);
    assert.notEqual(exec.status, 0);
    assert.match(
      exec.stderr,
      /^Error: kubeconfig \S+ \(--kubeconfig\): user u uses an exec plugin: install @kubernetes\/client-node to use it$/m,
    );
  });

  test("no host and port is one line, as client-go says it", () => {
    assert.throws(
      () => inClusterAccess({ env: {}, pathPrefix: serviceAccount("t") }),
      /^Error: unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined$/,
    );
  });
});
