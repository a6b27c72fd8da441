import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { isAlreadyExists, isConflict, isGone, isNotFound } from "../../src/rest/api-error.js";
import { listAll } from "../../src/rest/client.js";
import { HttpRestClient } from "../../src/rest/http-client.js";
import { kubeconfigAccess, loadKubeConfig } from "../../src/rest/kubeconfig.js";
import { endpointSlices, nodes, pods } from "../../src/rest/resources.js";
import { FakeClock } from "../../src/testing/fake-clock.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

type Route = (req: Seen, res: ServerResponse) => void;

let server: Server;
let route: Route = (_req, res) => res.writeHead(500).end();
const seen: Seen[] = [];
let dir: string;
let kubeconfig: string;

before(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const entry = {
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      body: Buffer.concat(chunks).toString(),
    };
    seen.push(entry);
    route(entry, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  dir = mkdtempSync(join(tmpdir(), "kube-rest-"));
  kubeconfig = join(dir, "config");
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        { name: "c", cluster: { server: `http://127.0.0.1:${port}`, "insecure-skip-tls-verify": true } },
      ],
      users: [{ name: "u", user: { token: "secret-token" } }],
      contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
      "current-context": "ctx",
    }),
  );
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const json = (res: ServerResponse, code: number, body: unknown) =>
  res.writeHead(code, { "Content-Type": "application/json" }).end(JSON.stringify(body));

function client() {
  return new HttpRestClient(loadKubeConfig({ kubeconfig }));
}

describe("HttpRestClient", () => {
  test("GETs an object with the kubeconfig's credentials", async () => {
    route = (_req, res) => json(res, 200, { kind: "Pod", metadata: { name: "p", namespace: "ns" } });
    const pod = await client().get(pods, "p", { namespace: "ns" });
    assert.equal(pod.metadata?.name, "p");
    const req = seen.at(-1);
    assert.equal(req?.url, "/api/v1/namespaces/ns/pods/p");
    assert.equal(req?.headers.authorization, "Bearer secret-token");
  });

  test("lists with selectors and pagination, following continue tokens in listAll", async () => {
    route = (req, res) => {
      const url = new URL(req.url, "http://x");
      const cont = url.searchParams.get("continue");
      json(res, 200, {
        metadata: { resourceVersion: cont ? "99" : "42", continue: cont ? undefined : "page2" },
        items: [{ metadata: { name: cont ? "b" : "a" } }],
      });
    };
    const list = await listAll(client(), endpointSlices, {
      namespace: "ns",
      labelSelector: "kubernetes.io/service-name=web",
      limit: 1,
    });
    assert.deepEqual(
      list.items.map((i) => i.metadata?.name),
      ["a", "b"],
    );
    assert.equal(list.metadata.resourceVersion, "42");
    const first = new URL(seen.at(-2)?.url ?? "", "http://x");
    assert.equal(first.pathname, "/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices");
    assert.equal(first.searchParams.get("labelSelector"), "kubernetes.io/service-name=web");
    assert.equal(first.searchParams.get("limit"), "1");
    assert.equal(new URL(seen.at(-1)?.url ?? "", "http://x").searchParams.get("continue"), "page2");
  });

  test("sends each patch type with its content type, and apply with a field manager", async () => {
    route = (_req, res) => json(res, 200, { metadata: { name: "n1" } });
    const c = client();
    await c.patch(nodes, "n1", "merge", { metadata: { labels: { a: "b" } } });
    assert.equal(seen.at(-1)?.headers["content-type"], "application/merge-patch+json");
    assert.equal(seen.at(-1)?.url, "/api/v1/nodes/n1");
    await c.patch(nodes, "n1", "json-patch", [{ op: "remove", path: "/metadata/labels/a" }]);
    assert.equal(seen.at(-1)?.headers["content-type"], "application/json-patch+json");
    await c.patch(
      nodes,
      "n1",
      "apply",
      { metadata: { name: "n1" } },
      { fieldManager: "switchyard", force: true },
    );
    const url = new URL(seen.at(-1)?.url ?? "", "http://x");
    assert.equal(seen.at(-1)?.headers["content-type"], "application/apply-patch+yaml");
    assert.equal(url.searchParams.get("fieldManager"), "switchyard");
    assert.equal(url.searchParams.get("force"), "true");
  });

  test("create fills in apiVersion and kind", async () => {
    route = (req, res) => json(res, 201, JSON.parse(req.body));
    await client().create(endpointSlices, {
      metadata: { name: "s", namespace: "ns" },
      addressType: "IPv4",
      endpoints: [],
    });
    assert.equal(seen.at(-1)?.url, "/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices");
    const body = JSON.parse(seen.at(-1)?.body ?? "{}");
    assert.equal(body.apiVersion, "discovery.k8s.io/v1");
    assert.equal(body.kind, "EndpointSlice");
  });

  test("turns failures into ApiError with code and reason", async () => {
    const statuses: [number, string, (e: unknown) => boolean][] = [
      [404, "NotFound", isNotFound],
      [409, "Conflict", isConflict],
      [409, "AlreadyExists", isAlreadyExists],
      [410, "Expired", isGone],
    ];
    for (const [code, reason, predicate] of statuses) {
      route = (_req, res) => json(res, code, { kind: "Status", code, reason, message: `${reason} happened` });
      const err = await client()
        .get(pods, "p", { namespace: "ns" })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(predicate(err), `${code} ${reason}`);
      assert.equal((err as { reason: string }).reason, reason);
      assert.match((err as Error).message, new RegExp(`${reason} happened`));
    }
  });

  test("streams watch events split across chunks, asking for bookmarks", async () => {
    route = (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      const lines = `${JSON.stringify({ type: "ADDED", object: { metadata: { name: "a", resourceVersion: "5" } } })}\n${JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "6" } } })}\n`;
      res.write(lines.slice(0, 17));
      setTimeout(() => res.end(lines.slice(17)), 10);
    };
    const events = [];
    for await (const e of client().watch(pods, {
      namespace: "ns",
      resourceVersion: "4",
      timeoutSeconds: 300,
    })) {
      events.push(`${e.type} ${e.object.metadata?.resourceVersion}`);
    }
    assert.deepEqual(events, ["ADDED 5", "BOOKMARK 6"]);
    const url = new URL(seen.at(-1)?.url ?? "", "http://x");
    assert.equal(url.searchParams.get("watch"), "true");
    assert.equal(url.searchParams.get("allowWatchBookmarks"), "true");
    assert.equal(url.searchParams.get("timeoutSeconds"), "300");
    assert.equal(url.searchParams.get("resourceVersion"), "4");
  });

  test("a connection whose SYN goes unanswered fails after the request timeout, not the kernel's retries", async () => {
    // A listener with a full accept queue: the kernel drops further SYNs, as it does a ClusterIP's before the
    // node's proxy has synced. Node's request.setTimeout alone would start only once connected.
    const listener = spawn("python3", [
      "-c",
      "import socket,time\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(30)",
    ]);
    try {
      const port = await new Promise<number>((resolve) =>
        listener.stdout.once("data", (d) => resolve(Number(String(d).trim()))),
      );
      const fillers = [0, 1, 2].map(() => connect(port, "127.0.0.1").on("error", () => {}));
      await new Promise((r) => setTimeout(r, 200));
      const dir2 = mkdtempSync(join(tmpdir(), "kube-syn-"));
      const config = join(dir2, "kubeconfig");
      writeFileSync(
        config,
        readFileSync(kubeconfig, "utf8").replace(/http:\/\/127\.0\.0\.1:\d+/, `http://127.0.0.1:${port}`),
      );
      const quick = new HttpRestClient(loadKubeConfig({ kubeconfig: config }), { requestTimeoutMs: 300 });
      const started = Date.now();
      await assert.rejects(quick.list(pods, {}), /no response within 300 ms/);
      assert.ok(Date.now() - started < 5000, "gave up at the timeout");
      for (const f of fillers) f.destroy();
      quick.close();
    } finally {
      listener.kill();
    }
  });

  test("a request on a kept-alive connection the server just reset is sent once more, on a new one", async () => {
    // A server that answers the first request on each connection and resets the connection at its second: what
    // a client meets when the server closes an idle keep-alive connection as a request goes out on it.
    const perSocket = new Map<object, number>();
    const resetting = createServer((req, res) => {
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      if (n > 1) {
        req.socket.resetAndDestroy();
        return;
      }
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ metadata: { name: "n1" } }));
    });
    await new Promise<void>((ok) => resetting.listen(0, "127.0.0.1", ok));
    const file = join(dir, "resetting-config");
    const cfg = JSON.parse(readFileSync(kubeconfig, "utf8"));
    cfg.clusters[0].cluster.server = `http://127.0.0.1:${(resetting.address() as AddressInfo).port}`;
    writeFileSync(file, JSON.stringify(cfg));
    try {
      const c = new HttpRestClient(kubeconfigAccess(file));
      assert.equal((await c.get(nodes, "n1")).metadata?.name, "n1");
      // The second goes out on the kept-alive socket, is reset, and succeeds on a new connection.
      assert.equal((await c.get(nodes, "n1")).metadata?.name, "n1");
      assert.equal(perSocket.size, 2, "a second connection was opened");
      assert.deepEqual([...perSocket.values()], [2, 1]);
    } finally {
      resetting.closeAllConnections();
      await new Promise((ok) => resetting.close(ok));
    }
  });

  test("a watch that gets no response fails after the request timeout; a quiet stream does not", async () => {
    const quick = () => new HttpRestClient(loadKubeConfig({ kubeconfig }), { requestTimeoutMs: 200 });
    route = () => {}; // never answers
    await assert.rejects(async () => {
      for await (const _ of quick().watch(pods, {})) break;
    }, /no response within 200 ms/);
    // Headers at once, then the first event only after several timeouts' worth of silence.
    route = (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.flushHeaders(); // as the apiserver does for a watch
      setTimeout(
        () => res.end(`${JSON.stringify({ type: "ADDED", object: { metadata: { name: "late" } } })}\n`),
        600,
      );
    };
    const names: (string | undefined)[] = [];
    for await (const e of quick().watch(pods, {})) names.push(e.object.metadata?.name);
    assert.deepEqual(names, ["late"]);
  });

  test("calls a path with its query and content type, decoding the answer as every other", async () => {
    route = (_req, res) => json(res, 200, { metadata: { name: "n1", labels: null } });
    const node = await client().call<{ metadata: { name: string; labels?: unknown } }>(
      "PATCH",
      "/api/v1/nodes/n1/status?fieldManager=lab",
      { status: { phase: "Running" } },
      "application/strategic-merge-patch+json",
    );
    assert.deepEqual(node, { metadata: { name: "n1" } });
    const req = seen.at(-1);
    assert.equal(req?.method, "PATCH");
    assert.equal(req?.url, "/api/v1/nodes/n1/status?fieldManager=lab");
    assert.equal(req?.headers["content-type"], "application/strategic-merge-patch+json");
    assert.deepEqual(JSON.parse(req?.body ?? ""), { status: { phase: "Running" } });
    route = (_req, res) => json(res, 404, { kind: "Status", code: 404, reason: "NotFound", message: "nope" });
    const err = await client()
      .call("GET", "/api/v1/nodes/gone?x=1")
      .catch((e: unknown) => e);
    assert.ok(isNotFound(err));
    assert.equal((err as Error).message, "GET /api/v1/nodes/gone: 404 NotFound: nope");
  });

  test("a watch on a path keeps its selectors and resolves once the server accepted it", async () => {
    let send: (line: string) => void = () => {};
    route = (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.flushHeaders();
      send = (line) => res.end(line);
    };
    const abort = new AbortController();
    const events = await client().watchPath<{ metadata?: { name?: string } }>(
      "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1",
      { resourceVersion: "7", timeoutSeconds: 300, signal: abort.signal },
    );
    // Accepted before anything was written: an event sent now is not missed.
    const url = new URL(seen.at(-1)?.url ?? "", "http://x");
    assert.equal(url.pathname, "/api/v1/pods");
    assert.equal(url.searchParams.get("fieldSelector"), "spec.nodeName=node-1");
    assert.equal(url.searchParams.get("watch"), "true");
    assert.equal(url.searchParams.get("allowWatchBookmarks"), "true");
    assert.equal(url.searchParams.get("resourceVersion"), "7");
    assert.equal(url.searchParams.get("timeoutSeconds"), "300");
    send(`${JSON.stringify({ type: "ADDED", object: { metadata: { name: "p" } } })}\n`);
    const names: (string | undefined)[] = [];
    for await (const e of events) names.push(e.object.metadata?.name);
    assert.deepEqual(names, ["p"]);

    route = (_req, res) =>
      json(res, 410, { kind: "Status", code: 410, reason: "Expired", message: "too old" });
    const gone = await client()
      .watchPath("/api/v1/pods", { resourceVersion: "1" })
      .catch((e: unknown) => e);
    assert.ok(isGone(gone));
  });

  test("one limit covers the whole exchange: a body that stalls after the headers fails at the request timeout", async () => {
    let answered: () => void = () => {};
    const headersSent = new Promise<void>((resolve) => {
      answered = resolve;
    });
    route = (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write('{"metadata":{"resourceVersion":"1"},"items":[');
      answered();
      // then nothing: the connection is blackholed mid-body
    };
    const clock = new FakeClock();
    const c = new HttpRestClient(loadKubeConfig({ kubeconfig }), { clock });
    let settled = false;
    const listing = c.list(pods).finally(() => {
      settled = true;
    });
    listing.catch(() => {});
    await headersSent;
    await new Promise((r) => setTimeout(r, 50));
    await clock.advance(29_999);
    assert.equal(settled, false, "inside the limit");
    await clock.advance(1);
    await assert.rejects(
      listing,
      /^TimeoutError: GET \/api\/v1\/pods: (response not complete|no response) within 30000 ms$/,
    );
    c.close();
  });

  test("a write that gets no answer fails at the request timeout with one line", async () => {
    route = () => {}; // never answers
    const quick = new HttpRestClient(loadKubeConfig({ kubeconfig }), { requestTimeoutMs: 200 });
    await assert.rejects(
      quick.update(pods, { metadata: { name: "p", namespace: "ns", resourceVersion: "3" } }),
      (err: Error) => err.message === "PUT /api/v1/namespaces/ns/pods/p: no response within 200 ms",
    );
    quick.close();
  });

  test("a watch the server does not close within timeoutSeconds is ended a request timeout later", async () => {
    route = (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write(`${JSON.stringify({ type: "ADDED", object: { metadata: { name: "a" } } })}\n`);
      // and then the stream goes quiet without ever ending: a server (or the path to it) that went away
    };
    const clock = new FakeClock();
    const c = new HttpRestClient(loadKubeConfig({ kubeconfig }), { clock, requestTimeoutMs: 1000 });
    const stream = c.watch(pods, { timeoutSeconds: 5 })[Symbol.asyncIterator]();
    assert.equal((await stream.next()).value?.object.metadata?.name, "a");
    let settled = false;
    const next = stream.next().finally(() => {
      settled = true;
    });
    next.catch(() => {});
    await clock.advance(5_999);
    assert.equal(settled, false, "the server still has time to close it");
    await clock.advance(1);
    await assert.rejects(next, /^TimeoutError: watch pods: not closed by the server within 6000 ms$/);
    c.close();
  });

  test("listAll falls back to one full list when a continue token has expired", async () => {
    const asked: URLSearchParams[] = [];
    route = (req, res) => {
      const q = new URL(req.url, "http://x").searchParams;
      asked.push(q);
      if (q.get("continue")) {
        json(res, 410, { kind: "Status", code: 410, reason: "Expired", message: "continue too old" });
      } else if (q.get("limit")) {
        json(res, 200, {
          metadata: { resourceVersion: "5", continue: "tok" },
          items: [{ metadata: { name: "a" } }],
        });
      } else {
        json(res, 200, {
          metadata: { resourceVersion: "9" },
          items: [{ metadata: { name: "a" } }, { metadata: { name: "b" } }],
        });
      }
    };
    const list = await listAll(client(), pods, { limit: 1, labelSelector: "app=x" });
    assert.deepEqual(
      list.items.map((i) => i.metadata?.name),
      ["a", "b"],
    );
    assert.equal(list.metadata.resourceVersion, "9");
    assert.deepEqual(
      asked.map((q) => [q.get("limit"), q.get("continue"), q.get("labelSelector")]),
      [
        ["1", null, "app=x"],
        ["1", "tok", "app=x"],
        [null, null, "app=x"],
      ],
    );
  });

  test("aborting a watch ends the iteration quietly", async () => {
    route = (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write(`${JSON.stringify({ type: "ADDED", object: { metadata: { name: "a" } } })}\n`);
    };
    const abort = new AbortController();
    const names: (string | undefined)[] = [];
    for await (const e of client().watch(pods, { signal: abort.signal })) {
      names.push(e.object.metadata?.name);
      abort.abort();
    }
    assert.deepEqual(names, ["a"]);
  });
});

describe("loadKubeConfig", () => {
  test("takes an explicit path, else the first existing $KUBECONFIG entry", () => {
    const home = mkdtempSync(join(tmpdir(), "kube-home-"));
    const server = kubeconfigAccess(kubeconfig).getCurrentCluster()?.server;
    assert.match(server ?? "", /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(loadKubeConfig({ kubeconfig, env: {}, home }).getCurrentCluster()?.server, server);
    assert.equal(
      loadKubeConfig({ env: { KUBECONFIG: `/nope:${kubeconfig}` }, home }).getCurrentCluster()?.server,
      server,
    );
  });

  test("fails with one line naming what it tried", () => {
    const home = mkdtempSync(join(tmpdir(), "kube-home-"));
    assert.throws(
      () => loadKubeConfig({ env: { KUBECONFIG: "/nope" }, home }),
      (err: Error) => {
        assert.equal(err.message.includes("\n"), false);
        assert.match(
          err.message,
          /no Kubernetes configuration found \(tried \$KUBECONFIG \/nope, default .*\.kube\/config\)/,
        );
        return true;
      },
    );
    assert.throws(
      () => loadKubeConfig({ kubeconfig: "/missing/config" }),
      /kubeconfig \/missing\/config does not exist/,
    );
  });
});
