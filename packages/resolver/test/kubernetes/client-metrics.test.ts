// The kubernetes plugin's API client metrics, named and labelled as CoreDNS v1.14.7 exports client-go's
// (plugin/kubernetes/metrics.go): a loopback HTTP server stands in for the API server, so the codes are real
// responses (the e2e suite checks the same families against a real kube-apiserver).
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { services } from "@switchyard/kube";
import { parseCorefile } from "../../src/corefile/parse.js";
import { Metrics } from "../../src/metrics/metrics.js";
import { urlHost } from "../../src/plugins/kubernetes/kube/client-metrics.js";
import { connect } from "../../src/plugins/kubernetes/kube/connect.js";
import { parseKubernetes } from "../../src/plugins/kubernetes/setup.js";

/** Lists answer 200 with no items, watches 200 and end at once, `/api/v1/namespaces/x/services` 403. */
function fakeApi(): http.Server {
  return http.createServer((req, res) => {
    if (req.url?.startsWith("/api/v1/namespaces/x/")) {
      res.writeHead(403, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", status: "Failure", code: 403, message: "forbidden" }));
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(req.url?.includes("watch=true") ? "" : JSON.stringify({ metadata: {}, items: [] }));
  });
}

/** The client the plugin builds for `kubernetes { endpoint URL }`, feeding `metrics`. */
function clientFor(url: string, metrics: Metrics) {
  const [block] = parseCorefile(`cluster.local {\n kubernetes {\n  endpoint ${url}\n }\n}\n`, { env: {} });
  const stanza = block?.stanzas[0];
  assert.ok(stanza);
  return connect(parseKubernetes(stanza, ["cluster.local."]), {}, metrics);
}

describe("kubernetes client metrics", () => {
  let server: http.Server;
  let url = "";
  before(async () => {
    server = fakeApi();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  test("lists are counted and timed; watches only counted; failures by their code or <error>", async () => {
    const metrics = new Metrics();
    const client = clientFor(url, metrics);
    try {
      await client.list(services);
      await client.list(services);
      for await (const _ of client.watch(services)) assert.fail("the fake watch has no events");
      await assert.rejects(client.list(services, { namespace: "x" }), /forbidden/);
    } finally {
      client.close();
    }
    const unreachable = clientFor("http://127.0.0.1:1", metrics);
    await assert.rejects(unreachable.list(services));
    unreachable.close();

    const text = await metrics.text();
    const host = `127.0.0.1:${new URL(url).port}`;
    assert.match(
      text,
      /^# HELP coredns_kubernetes_rest_client_requests_total Number of HTTP requests, partitioned by status code, method, and host\.$/m,
    );
    assert.match(
      text,
      new RegExp(
        `^coredns_kubernetes_rest_client_requests_total\\{code="200",method="GET",host="${host}"\\} 3$`,
        "m",
      ),
    );
    assert.match(
      text,
      new RegExp(
        `^coredns_kubernetes_rest_client_requests_total\\{code="403",method="GET",host="${host}"\\} 1$`,
        "m",
      ),
    );
    assert.match(
      text,
      /^coredns_kubernetes_rest_client_requests_total\{code="<error>",method="GET",host="127\.0\.0\.1:1"\} 1$/m,
    );
    // Three lists (two 200, one 403): the watch is not timed, as client-go times only non-watch requests.
    assert.match(
      text,
      new RegExp(
        `^coredns_kubernetes_rest_client_request_duration_seconds_count\\{verb="GET",host="${host}"\\} 3$`,
        "m",
      ),
    );
    assert.match(
      text,
      new RegExp(
        `^coredns_kubernetes_rest_client_rate_limiter_duration_seconds_bucket\\{le="0.005",verb="GET",host="${host}"\\} 3$`,
        "m",
      ),
    );
    assert.match(text, /_request_duration_seconds_bucket\{le="10",/);
  });

  test("host is the URL's authority as written, default port and all, as Go's url.URL.Host", () => {
    assert.equal(urlHost("https://10.96.0.1:443"), "10.96.0.1:443");
    assert.equal(urlHost("https://kubernetes.default.svc"), "kubernetes.default.svc");
    assert.equal(urlHost("https://[fd00::1]:6443/prefix"), "[fd00::1]:6443");
    assert.equal(urlHost("https://user@api.example:8443"), "api.example:8443");
  });
});
