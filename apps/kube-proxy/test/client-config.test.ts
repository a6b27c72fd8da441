// --master against the kubeconfig, as upstream's createClient combines them: master alone is an
// anonymous server, both is the file with its server replaced, neither is the usual search; the
// kubeconfig path comes from --kubeconfig without --config and from the file's
// clientConnection.kubeconfig with one, while --master applies either way.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type ClusterAccess, clusterAccess, masterURL } from "@switchyard/kube";
import { parseCommandLine } from "../src/cli/flags.js";
import { resolve } from "../src/config/config.js";
import { loadConfiguration } from "../src/main.js";

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://wrong.example:6443
    certificate-authority-data: ${Buffer.from("not a real CA").toString("base64")}
users:
- name: u
  user:
    token: secret-token
contexts:
- name: x
  context: { cluster: c, user: u }
current-context: x
`;

function kubeconfigFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), "sy-master-")), "kubeconfig");
  writeFileSync(path, KUBECONFIG);
  return path;
}

async function requestOptions(access: ClusterAccess) {
  const opts: { ca?: unknown; headers?: Record<string, unknown> } = {};
  await access.applyToHTTPSOptions(opts as never);
  return opts;
}

test("masterURL: a scheme is kept; host:port alone is plain http, as client-go defaults it", () => {
  assert.equal(masterURL("https://10.0.0.1:6443"), "https://10.0.0.1:6443");
  assert.equal(masterURL("http://localhost:8080/"), "http://localhost:8080");
  assert.equal(masterURL("10.0.0.1:8080"), "http://10.0.0.1:8080");
  assert.equal(masterURL("localhost:8080"), "http://localhost:8080");
  assert.equal(masterURL("[::1]:6443"), "http://[::1]:6443");
  assert.equal(masterURL("ftp://x"), undefined);
  assert.equal(masterURL("http://"), undefined);
  assert.equal(masterURL("a b"), undefined);
});

test("--master alone: that server, with no credentials", async () => {
  const access = clusterAccess("", "https://10.0.0.1:6443", () => assert.fail("no kubeconfig is read"));
  assert.equal(access.getCurrentCluster()?.server, "https://10.0.0.1:6443");
  assert.deepEqual(await requestOptions(access), {});
});

test("--kubeconfig and https --master: the file's CA and token, the master's server", async () => {
  const access = clusterAccess(kubeconfigFile(), "https://right.example:6443");
  assert.equal(access.getCurrentCluster()?.server, "https://right.example:6443");
  const opts = await requestOptions(access);
  assert.equal(String(opts.ca), "not a real CA");
  assert.equal(opts.headers?.Authorization, "Bearer secret-token");
});

test("--kubeconfig and a plain-http --master: client-go sends none of the file's credentials", async () => {
  const access = clusterAccess(kubeconfigFile(), "127.0.0.1:8080");
  assert.equal(access.getCurrentCluster()?.server, "http://127.0.0.1:8080");
  assert.deepEqual(await requestOptions(access), {});
});

test("no --master: the kubeconfig as it is, and the usual search without one", () => {
  assert.equal(clusterAccess(kubeconfigFile(), "").getCurrentCluster()?.server, "https://wrong.example:6443");
  let asked: unknown = "not called";
  clusterAccess("", "", (o) => {
    asked = o?.kubeconfig;
    return { getCurrentCluster: () => null, applyToHTTPSOptions: async () => {} } as never;
  });
  assert.equal(asked, undefined);
});

test("--master is not a config field: it survives --config, whose clientConnection.kubeconfig is used", () => {
  const file =
    "kind: KubeProxyConfiguration\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nclientConnection:\n  kubeconfig: /from/file\n";
  const cl = parseCommandLine(["--config=/c.yaml", "--kubeconfig=/from/flag", "--master=https://m:6443"]);
  assert.equal(cl.master, "https://m:6443");
  assert.equal(resolve(loadConfiguration(cl, () => file)).kubeconfig, "/from/file");
  const noFile = parseCommandLine(["--kubeconfig=/from/flag", "--master", "m:8080"]);
  assert.equal(resolve(loadConfiguration(noFile, () => "")).kubeconfig, "/from/flag");
  assert.equal(noFile.master, "m:8080");
});

test("a bad --master is one line naming the flag and value", () => {
  assert.throws(() => parseCommandLine(["--master=ftp://x"]), {
    message:
      'invalid value "ftp://x" for flag --master: want a URL such as https://10.0.0.1:6443, or host:port',
  });
});

test("--init-only parses as a bool and is not reported as ignored with --config", () => {
  assert.equal(parseCommandLine(["--init-only"]).initOnly, true);
  assert.equal(parseCommandLine(["--init-only=false"]).initOnly, false);
  assert.equal(parseCommandLine([]).initOnly, false);
  assert.throws(() => parseCommandLine(["--init-only=maybe"]), /--init-only: want true or false/);
});
