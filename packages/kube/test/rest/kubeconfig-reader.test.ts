import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import type * as https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import type { ClusterAccess } from "../../src/rest/cluster-access.js";
import { kubeconfigAccess } from "../../src/rest/kubeconfig.js";
import { readKubeconfigFile } from "../../src/rest/kubeconfig-reader.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");

/** The access of a file read without client-node; fails the test when the file needs it. */
function plain(path: string, context?: string): ClusterAccess {
  const file = readKubeconfigFile(path, "test", context);
  assert.ok("access" in file, `needs client-node: ${JSON.stringify(file)}`);
  return file.access;
}

/** The feature that sends a file to client-node, or undefined when it is read without. */
function needs(path: string): string | undefined {
  const file = readKubeconfigFile(path, "test");
  return "clientNodeFeature" in file ? file.clientNodeFeature : undefined;
}

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
    assert.deepEqual(await seen(plain(write(TWO_CONTEXTS, files))), {
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
    const got = await seen(plain(write(TWO_CONTEXTS, files), "ctx-a"));
    assert.deepEqual(
      [got.server, got.ca, got.cert, got.key],
      ["https://10.0.0.1:6443", "CA-A", "CERT", "KEY"],
    );
  });

  test("requests get what client-node's KubeConfig gives for the same file and context", async () => {
    const path = write(TWO_CONTEXTS, files);
    for (const context of ["ctx-a", "ctx-b"]) {
      const ours = await seen(plain(path, context));
      const kc = new KubeConfig();
      kc.loadFromFile(path);
      kc.setCurrentContext(context);
      assert.deepEqual(ours, await seen(kc), context);
    }
  });

  test("insecure-skip-tls-verify turns verification off", async () => {
    const text = TWO_CONTEXTS.replace("tls-server-name: kubernetes", "insecure-skip-tls-verify: true");
    const got = await seen(plain(write(text, files)));
    assert.equal(got.rejectUnauthorized, false);
    assert.equal(plain(write(text, files)).getCurrentCluster()?.skipTLSVerify, true);
  });

  test("users and clusters that need client-node are named with the feature they use", () => {
    const user = (fields: string) =>
      write(TWO_CONTEXTS.replace("user: {token: sekret}", `user: {${fields}}`), files);
    assert.equal(needs(write(TWO_CONTEXTS, files)), undefined);
    assert.equal(
      needs(user("exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/echo}")),
      "user tok uses an exec plugin",
    );
    assert.equal(needs(user("auth-provider: {name: oidc}")), "user tok uses an auth provider");
    assert.equal(needs(user("username: u, password: p")), "user tok uses basic auth");
    assert.equal(needs(user("token: t, as: someone")), "user tok uses impersonation");
    const proxied = TWO_CONTEXTS.replace("tls-server-name: kubernetes", "proxy-url: 'http://proxy:3128'");
    assert.equal(needs(write(proxied, files)), "cluster b uses a proxy-url");
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
