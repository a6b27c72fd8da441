import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type * as https from "node:https";
import { type AddressInfo, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type ClientNodeLoader, clientNodeAccess, clientNodeLoader } from "../../src/rest/client-node.js";
import { HttpRestClient } from "../../src/rest/http-client.js";
import { kubeconfigAccess } from "../../src/rest/kubeconfig.js";
import { readKubeconfigFile } from "../../src/rest/kubeconfig-reader.js";
import { nodes } from "../../src/rest/resources.js";

/** A kubeconfig whose current context `exec` has an exec-plugin user, and a context `as` that impersonates. */
function kubeconfig(): string {
  const dir = mkdtempSync(join(tmpdir(), "sy-cn-"));
  // The plugin prints an ExecCredential, as kubectl's credential plugins do.
  const plugin = join(dir, "plugin.sh");
  const credential = {
    apiVersion: "client.authentication.k8s.io/v1",
    kind: "ExecCredential",
    status: { token: "from-plugin" },
  };
  writeFileSync(plugin, `#!/bin/sh\necho '${JSON.stringify(credential)}'\n`);
  chmodSync(plugin, 0o755);
  writeFileSync(join(dir, "token"), "from-file");
  const text = [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- {name: c, cluster: {server: 'https://10.0.0.9:6443', insecure-skip-tls-verify: true}}",
    "users:",
    `- {name: plugged, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ${plugin}}}}`,
    "- {name: admin, user: {tokenFile: token, as: alice}}",
    "contexts:",
    "- {name: exec, context: {cluster: c, user: plugged}}",
    "- {name: as, context: {cluster: c, user: admin}}",
    "current-context: exec",
    "",
  ].join("\n");
  writeFileSync(join(dir, "config"), text);
  return join(dir, "config");
}

/** The real loader, counting its loads. */
function counting(): ClientNodeLoader & { loads: number } {
  const loader = {
    loads: 0,
    resolve: () => clientNodeLoader.resolve(),
    load: () => {
      loader.loads++;
      return clientNodeLoader.load();
    },
  };
  return loader;
}

async function headers(access: { applyToHTTPSOptions(o: https.RequestOptions): Promise<void> }) {
  const opts: https.RequestOptions = {};
  await access.applyToHTTPSOptions(opts);
  return opts.headers as Record<string, string> | undefined;
}

function needing(path: string, context?: string) {
  const file = readKubeconfigFile(path, "test", context);
  assert.ok("clientNodeFeature" in file);
  return file;
}

describe("kubeconfig features through @kubernetes/client-node", () => {
  test("an exec plugin: client-node is imported at the first request, once, and gives the plugin's token", async () => {
    const path = kubeconfig();
    const loader = counting();
    const access = clientNodeAccess(path, "test", needing(path), undefined, loader);
    assert.equal(access.getCurrentCluster()?.server, "https://10.0.0.9:6443");
    assert.equal(loader.loads, 0, "not imported before a request");
    assert.equal((await headers(access))?.Authorization, "Bearer from-plugin");
    assert.equal((await headers(access))?.Authorization, "Bearer from-plugin");
    assert.equal(loader.loads, 1);
  });

  test("another context: kubectl's tokenFile and impersonation", async () => {
    const path = kubeconfig();
    const got = await headers(kubeconfigAccess(path, "test", "as"));
    assert.equal(got?.Authorization, "Bearer from-file");
    assert.equal(got?.["Impersonate-User"], "alice");
  });

  test("a cluster's proxy-url: requests go through the proxy", async () => {
    const seen: string[] = [];
    const api = createServer((req, res) => {
      seen.push(`${req.url} ${req.headers.authorization}`);
      res.writeHead(200, { "content-type": "application/json" }).end('{"metadata":{"name":"n1"}}');
    });
    // client-node's proxy agent tunnels with CONNECT; this proxy notes the target and tunnels to `api` instead.
    const proxy = createServer();
    proxy.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
      seen.push(`CONNECT ${req.url}`);
      const upstream = connect((api.address() as AddressInfo).port, "127.0.0.1", () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(client).pipe(upstream);
      });
    });
    await Promise.all([api, proxy].map((s) => new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok))));
    const dir = mkdtempSync(join(tmpdir(), "sy-cn-"));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    // The server is in TEST-NET-1: reached only through the proxy.
    const text = [
      "clusters:",
      `- {name: c, cluster: {server: 'http://192.0.2.1:8080', proxy-url: '${proxyUrl}'}}`,
      "users: [{name: u, user: {token: t}}]",
      "contexts: [{name: x, context: {cluster: c, user: u}}]",
      "current-context: x",
    ].join("\n");
    writeFileSync(join(dir, "config"), text);
    const client = new HttpRestClient(kubeconfigAccess(join(dir, "config"), "test"), {
      requestTimeoutMs: 5000,
    });
    try {
      assert.equal((await client.get(nodes, "n1")).metadata?.name, "n1");
      assert.deepEqual(seen, ["CONNECT 192.0.2.1:8080", "/api/v1/nodes/n1 Bearer t"]);
    } finally {
      client.close();
      proxy.close();
      api.close();
      proxy.closeAllConnections();
      api.closeAllConnections();
    }
  });

  test("without the package: one line naming the file, the feature and the package, before any request", () => {
    const path = kubeconfig();
    let loads = 0;
    const missing: ClientNodeLoader = {
      resolve: () => {
        throw new Error("Cannot find package '@kubernetes/client-node'");
      },
      load: () => {
        loads++;
        return clientNodeLoader.load();
      },
    };
    assert.throws(
      () => clientNodeAccess(path, "--kubeconfig", needing(path), undefined, missing),
      (err: Error) => {
        assert.equal(
          err.message,
          `kubeconfig ${path} (--kubeconfig): user plugged uses an exec plugin: install @kubernetes/client-node to use it`,
        );
        return true;
      },
    );
    assert.throws(
      () => clientNodeAccess(path, "x", needing(path, "as"), "as", missing),
      /: user admin uses impersonation: install @kubernetes\/client-node to use it$/,
    );
    assert.equal(loads, 0);
  });
});
