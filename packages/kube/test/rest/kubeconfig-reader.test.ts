import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import type * as https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { ClusterAccess } from "../../src/rest/in-cluster.js";
import { kubeconfigAccess, loadKubeConfigFile } from "../../src/rest/kubeconfig.js";
import { readKubeconfigFile } from "../../src/rest/kubeconfig-reader.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");

function write(text: string, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "sy-kcr-"));
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  writeFileSync(join(dir, "config"), text);
  return join(dir, "config");
}

/** Two clusters and users; `ctx-b` is current. */
const TWO_CONTEXTS = [
  "apiVersion: v1",
  "kind: Config",
  "clusters:",
  "- name: a",
  `  cluster: {server: 'https://10.0.0.1:6443', certificate-authority-data: ${b64("CA-A")}}`,
  "- name: b",
  "  cluster: {server: 'https://10.0.0.2:6443', certificate-authority: ca.crt, tls-server-name: kubernetes}",
  "users:",
  "- name: cert",
  `  user: {client-certificate-data: ${b64("CERT")}, client-key: key.pem}`,
  "- name: tok",
  "  user: {token: sekret}",
  "contexts:",
  "- {name: ctx-a, context: {cluster: a, user: cert}}",
  "- {name: ctx-b, context: {cluster: b, user: tok, namespace: x}}",
  "current-context: ctx-b",
  "",
].join("\n");

async function options(access: ClusterAccess): Promise<https.RequestOptions> {
  const opts: https.RequestOptions = {};
  await access.applyToHTTPSOptions(opts);
  return opts;
}

/** What a request gets, as the fields the REST client reads. */
async function seen(access: ClusterAccess) {
  const o = await options(access);
  return {
    server: access.getCurrentCluster()?.server,
    ca: o.ca?.toString(),
    cert: o.cert?.toString(),
    key: o.key?.toString(),
    servername: o.servername,
    rejectUnauthorized: o.rejectUnauthorized,
    authorization: (o.headers as Record<string, string> | undefined)?.Authorization,
  };
}

describe("kubeconfig files without client-node", () => {
  const files = { "ca.crt": "CA-B", "key.pem": "KEY" };

  test("the current context: its cluster's CA file (relative to the file), TLS server name and token", async () => {
    const access = readKubeconfigFile(write(TWO_CONTEXTS, files), "test");
    assert.ok(access);
    assert.deepEqual(await seen(access), {
      server: "https://10.0.0.2:6443",
      ca: "CA-B",
      cert: undefined,
      key: undefined,
      servername: "kubernetes",
      rejectUnauthorized: undefined,
      authorization: "Bearer sekret",
    });
  });

  test("another context: inline CA and certificate data, a key file", async () => {
    const access = readKubeconfigFile(write(TWO_CONTEXTS, files), "test", "ctx-a");
    assert.ok(access);
    const got = await seen(access);
    assert.deepEqual(
      [got.server, got.ca, got.cert, got.key],
      ["https://10.0.0.1:6443", "CA-A", "CERT", "KEY"],
    );
  });

  test("requests get what client-node's KubeConfig gives for the same file and context", async () => {
    const path = write(TWO_CONTEXTS, files);
    for (const context of ["ctx-a", "ctx-b"]) {
      const ours = await seen(readKubeconfigFile(path, "test", context) as ClusterAccess);
      const kc = loadKubeConfigFile(path);
      kc.setCurrentContext(context);
      assert.deepEqual(ours, await seen(kc), context);
    }
  });

  test("insecure-skip-tls-verify turns verification off", async () => {
    const text = TWO_CONTEXTS.replace("tls-server-name: kubernetes", "insecure-skip-tls-verify: true");
    const got = await seen(readKubeconfigFile(write(text, files), "test") as ClusterAccess);
    assert.equal(got.rejectUnauthorized, false);
    assert.equal(readKubeconfigFile(write(text, files), "test")?.getCurrentCluster()?.skipTLSVerify, true);
  });

  test("users that need client-node are handed to it; kubeconfigAccess then uses client-node", async () => {
    const exec = TWO_CONTEXTS.replace(
      "user: {token: sekret}",
      "user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/echo}}",
    );
    const path = write(exec, files);
    assert.equal(readKubeconfigFile(path, "test"), undefined);
    const access = kubeconfigAccess(path, "test");
    assert.equal(access.getCurrentCluster()?.server, "https://10.0.0.2:6443");
    assert.equal(
      typeof (access as { getContexts?: unknown }).getContexts,
      "function",
      "a client-node KubeConfig",
    );
    const proxied = TWO_CONTEXTS.replace("tls-server-name: kubernetes", "proxy-url: 'http://proxy:3128'");
    assert.equal(readKubeconfigFile(write(proxied, files), "test"), undefined);
  });

  test("bad files are one line naming the file", () => {
    assert.throws(
      () => readKubeconfigFile(write("clusters: [unclosed"), "--kubeconfig"),
      /^Error: kubeconfig \S+ \(--kubeconfig\) is invalid: [^\n]+$/,
    );
    assert.throws(
      () =>
        readKubeconfigFile(
          write(TWO_CONTEXTS.replace("current-context: ctx-b", "current-context: gone")),
          "x",
        ),
      /^Error: kubeconfig \S+ \(x\) has no current cluster$/,
    );
    assert.throws(
      () => readKubeconfigFile(write(TWO_CONTEXTS, files), "x", "nope"),
      /^Error: kubeconfig \S+ has no context 'nope'$/,
    );
    assert.throws(
      () => kubeconfigAccess(write("clusters: null\nusers: null\n"), "x"),
      /has no current cluster/,
    );
  });
});
