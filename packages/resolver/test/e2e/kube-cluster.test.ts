// The kubernetes plugin on informers against a real kube-apiserver, queried with the real dig. Objects
// are written straight through the API (EndpointSlices included), so no controller runs.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { endpointSlices, HttpRestClient, loadKubeConfig, namespaces, services } from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import type { Endpoint, EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { Metrics } from "../../src/metrics/metrics.js";
import { Resolver } from "../../src/resolver.js";
import { dig } from "../helpers/clients.js";
import { type ControlPlane, controlPlaneSkip, startControlPlane } from "../helpers/control-plane.js";

const NS = "dnstest";
const ZONE = "cluster.local";

function corefile(kubernetesLines: string): string {
  // `cache 1` caps every entry at one second, so deletions show within a poll or two.
  return `${ZONE} in-addr.arpa ip6.arpa {
    ready 127.0.0.1:0
    kubernetes ${ZONE} in-addr.arpa ip6.arpa {
${kubernetesLines}
       ttl 1
    }
    cache 1
}
`;
}

function slice(
  name: string,
  service: string,
  addressType: "IPv4" | "IPv6",
  endpoints: Endpoint[],
): EndpointSlice {
  return {
    metadata: {
      name,
      namespace: NS,
      labels: {
        "kubernetes.io/service-name": service,
        "endpointslice.kubernetes.io/managed-by": "resolver-tests.switchyard.dev",
      },
    },
    addressType,
    endpoints,
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
  };
}

const status = (out: string) => /status: (\w+)/.exec(out)?.[1];
const short = (out: string) => out.trim().split("\n").filter(Boolean).sort();

describe("kubernetes plugin on a real kube-apiserver", { skip: controlPlaneSkip, timeout: 180_000 }, () => {
  let cp: ControlPlane;
  let client: HttpRestClient;
  let resolver: Resolver;
  let port = 0;
  let webIP = "";
  const metrics = new Metrics();
  const q = (...args: string[]) => dig(port, ...args);

  before(async () => {
    cp = await startControlPlane();
    client = new HttpRestClient(loadKubeConfig({ kubeconfig: cp.kubeconfigPath }));
    await client.create(namespaces, { metadata: { name: NS } });
    const web = await client.create(services, {
      metadata: { name: "web", namespace: NS },
      spec: {
        ports: [
          { name: "http", port: 80, protocol: "TCP" },
          { name: "dns", port: 53, protocol: "UDP" },
        ],
      },
    });
    webIP = web.spec?.clusterIP ?? "";
    await client.create(services, {
      metadata: { name: "hl", namespace: NS },
      spec: { clusterIP: "None", ports: [{ name: "http", port: 8080 }] },
    });
    await client.create(
      endpointSlices,
      slice("hl-v4", "hl", "IPv4", [
        { addresses: ["10.1.0.1"], hostname: "alpha", conditions: { ready: true } },
        { addresses: ["10.1.0.2"], targetRef: { kind: "Pod", name: "pod-b", namespace: NS } },
        { addresses: ["10.1.0.3"], conditions: { ready: false } },
      ]),
    );
    await client.create(
      endpointSlices,
      slice("hl-v6", "hl", "IPv6", [{ addresses: ["fd00::1"], conditions: { ready: true } }]),
    );
    await client.create(services, {
      metadata: { name: "ext", namespace: NS },
      spec: { type: "ExternalName", externalName: `web.${NS}.svc.${ZONE}` },
    });
    resolver = Resolver.fromCorefile(
      corefile(`       kubeconfig ${cp.kubeconfigPath}\n       startup_timeout 30s`),
      { env: {}, deps: { metrics, log: () => {} }, address: "127.0.0.1", portOverride: 0 },
    );
    // start() returns once the informers have synced (startup_timeout), so the first query sees them.
    await resolver.start();
    port = resolver.servers[0]?.address.port ?? 0;
  });

  after(async () => {
    await resolver?.stop();
    client?.close();
    await cp?.stop();
  });

  test("A for a ClusterIP Service, over UDP and TCP", async () => {
    assert.match(webIP, /^\d+\.\d+\.\d+\.\d+$/);
    assert.deepEqual(short(await q(`web.${NS}.svc.${ZONE}`, "A", "+short")), [webIP]);
    assert.deepEqual(short(await q(`web.${NS}.svc.${ZONE}`, "A", "+short", "+tcp")), [webIP]);
  });

  test("AAAA for a single-stack IPv4 Service is NODATA with the SOA", async () => {
    const out = await q(`web.${NS}.svc.${ZONE}`, "AAAA");
    assert.equal(status(out), "NOERROR");
    assert.match(out, /ANSWER: 0, AUTHORITY: 1/);
    assert.match(
      out,
      /cluster\.local\.\s+\d+\s+IN\s+SOA\s+ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\./,
    );
  });

  test("headless A lists only ready endpoints; AAAA comes from the IPv6 slice", async () => {
    assert.deepEqual(short(await q(`hl.${NS}.svc.${ZONE}`, "A", "+short", "+tcp")), ["10.1.0.1", "10.1.0.2"]);
    assert.deepEqual(short(await q(`hl.${NS}.svc.${ZONE}`, "AAAA", "+short")), ["fd00::1"]);
  });

  test("endpoint names: hostname, dashed IP; a not-ready endpoint is NXDOMAIN", async () => {
    assert.deepEqual(short(await q(`alpha.hl.${NS}.svc.${ZONE}`, "A", "+short")), ["10.1.0.1"]);
    assert.deepEqual(short(await q(`10-1-0-2.hl.${NS}.svc.${ZONE}`, "A", "+short")), ["10.1.0.2"]);
    assert.deepEqual(short(await q(`fd00--1.hl.${NS}.svc.${ZONE}`, "AAAA", "+short")), ["fd00::1"]);
    assert.equal(status(await q(`10-1-0-3.hl.${NS}.svc.${ZONE}`, "A")), "NXDOMAIN");
  });

  test("SRV for named ports, ClusterIP and headless", async () => {
    assert.deepEqual(short(await q(`_http._tcp.web.${NS}.svc.${ZONE}`, "SRV", "+short")), [
      `0 100 80 web.${NS}.svc.${ZONE}.`,
    ]);
    assert.deepEqual(short(await q(`_dns._udp.web.${NS}.svc.${ZONE}`, "SRV", "+short")), [
      `0 100 53 web.${NS}.svc.${ZONE}.`,
    ]);
    const out = await q(`_http._tcp.hl.${NS}.svc.${ZONE}`, "SRV", "+noall", "+answer", "+additional");
    for (const target of ["alpha", "10-1-0-2", "fd00--1"])
      assert.match(out, new RegExp(`SRV\\s+0 33 8080 ${target}\\.hl\\.${NS}\\.svc\\.cluster\\.local\\.`));
    assert.match(out, /^alpha\.hl\.dnstest\.svc\.cluster\.local\.\s+\d+\s+IN\s+A\s+10\.1\.0\.1$/m);
  });

  test("PTR for the ClusterIP and for an endpoint IP", async () => {
    assert.deepEqual(short(await q("-x", webIP, "+short")), [`web.${NS}.svc.${ZONE}.`]);
    assert.deepEqual(short(await q("-x", "10.1.0.1", "+short")), [`alpha.hl.${NS}.svc.${ZONE}.`]);
    assert.deepEqual(short(await q("-x", "fd00::1", "+short", "+tcp")), [`fd00--1.hl.${NS}.svc.${ZONE}.`]);
  });

  test("ExternalName: CNAME, followed inside the zone", async () => {
    const out = await q(`ext.${NS}.svc.${ZONE}`, "A", "+noall", "+answer");
    assert.match(
      out,
      /^ext\.dnstest\.svc\.cluster\.local\.\s+1\s+IN\s+CNAME\s+web\.dnstest\.svc\.cluster\.local\.$/m,
    );
    assert.match(
      out,
      new RegExp(
        `^web\\.dnstest\\.svc\\.cluster\\.local\\.\\s+1\\s+IN\\s+A\\s+${webIP.replaceAll(".", "\\.")}$`,
        "m",
      ),
    );
  });

  test("dns-version TXT with EDNS and a large buffer; +norec is echoed", async () => {
    const out = await q(`dns-version.${ZONE}`, "TXT", "+edns=0", "+bufsize=4096", "+norec");
    assert.match(out, /dns-version\.cluster\.local\.\s+\d+\s+IN\s+TXT\s+"1\.1\.0"/);
    assert.match(out, /EDNS: version: 0, flags:; udp: 4096/);
    assert.match(out, /flags: qr aa;/);
  });

  test("NXDOMAIN for an unknown Service and an unknown namespace", async () => {
    assert.equal(status(await q(`nope.${NS}.svc.${ZONE}`, "A")), "NXDOMAIN");
    assert.equal(status(await q(`web.nowhere.svc.${ZONE}`, "A")), "NXDOMAIN");
    assert.equal(status(await q(`${NS}.svc.${ZONE}`, "A")), "NOERROR");
  });

  test("a new Service resolves once the cache has it; a deleted one turns NXDOMAIN", async () => {
    const name = `late.${NS}.svc.${ZONE}`;
    assert.equal(status(await q(name, "A")), "NXDOMAIN");
    const late = await client.create(services, {
      metadata: { name: "late", namespace: NS },
      spec: { ports: [{ port: 80 }] },
    });
    const ip = late.spec?.clusterIP ?? "";
    await eventually(`${name} to resolve to ${ip}`, async () => (await q(name, "A", "+short")).trim() === ip);
    await client.delete(services, "late", { namespace: NS });
    await eventually(`${name} to be NXDOMAIN`, async () => status(await q(name, "A")) === "NXDOMAIN");
  });

  test("headless endpoints turning ready and not ready", async () => {
    const name = `flip.${NS}.svc.${ZONE}`;
    await client.create(services, {
      metadata: { name: "flip", namespace: NS },
      spec: { clusterIP: "None", ports: [{ name: "http", port: 8080 }] },
    });
    const endpoints = (ready: boolean): Endpoint[] => [
      { addresses: ["10.2.0.1"], conditions: { ready: true } },
      { addresses: ["10.2.0.2"], conditions: { ready } },
    ];
    await client.create(endpointSlices, slice("flip-1", "flip", "IPv4", endpoints(false)));
    await eventually("one ready endpoint", async () => (await q(name, "A", "+short")).trim() === "10.2.0.1");
    const stamp = new Date().toISOString();
    await client.patch(
      endpointSlices,
      "flip-1",
      "merge",
      {
        metadata: { annotations: { "endpoints.kubernetes.io/last-change-trigger-time": stamp } },
        endpoints: endpoints(true),
      },
      { namespace: NS },
    );
    await eventually(
      "both endpoints",
      async () => short(await q(name, "A", "+short")).join() === "10.2.0.1,10.2.0.2",
    );
    await client.patch(
      endpointSlices,
      "flip-1",
      "merge",
      { endpoints: [endpoints(false)[1]] },
      { namespace: NS },
    );
    await eventually(`${name} with no ready endpoint`, async () => status(await q(name, "A")) === "NXDOMAIN");
    const text = await metrics.text();
    assert.match(
      text,
      /coredns_kubernetes_dns_programming_duration_seconds_count\{service_kind="headless_with_selector"\} [1-9]/,
    );
  });

  test("client metrics: lists timed and counted, watches counted, by the API server's host", async () => {
    const text = await metrics.text();
    const host = client.server.host;
    const count = (pattern: string) => Number(new RegExp(`^${pattern} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    const labels = `code="200",method="GET",host="${host}"`;
    // Services, EndpointSlices and Namespaces: at least one list and one watch each.
    assert.ok(count(`coredns_kubernetes_rest_client_requests_total\\{${labels}\\}`) >= 6, text);
    const timed = count(
      `coredns_kubernetes_rest_client_request_duration_seconds_count\\{verb="GET",host="${host}"\\}`,
    );
    assert.ok(timed >= 3, text);
    assert.equal(
      count(
        `coredns_kubernetes_rest_client_rate_limiter_duration_seconds_count\\{verb="GET",host="${host}"\\}`,
      ),
      timed,
    );
  });

  test("endpoint URL with tls client certificates reaches the same API server", async () => {
    const pki = join(cp.stateDir, "pki");
    const other = Resolver.fromCorefile(
      corefile(
        `       endpoint ${cp.server}\n       tls ${join(pki, "admin.crt")} ${join(pki, "admin.key")} ${join(pki, "ca.crt")}`,
      ),
      { env: {}, deps: { log: () => {} }, address: "127.0.0.1", portOverride: 0 },
    );
    await other.start();
    try {
      const otherPort = other.servers[0]?.address.port ?? 0;
      assert.deepEqual(short(await dig(otherPort, `web.${NS}.svc.${ZONE}`, "A", "+short")), [webIP]);
    } finally {
      await other.stop();
    }
  });

  test("labels and namespace_labels: the API server sends only matching objects", async () => {
    const tagged = await client.create(services, {
      metadata: { name: "tagged", namespace: NS, labels: { tier: "front" } },
      spec: { ports: [{ name: "http", port: 80 }] },
    });
    await client.create(namespaces, { metadata: { name: `${NS}-other` } });
    await client.create(services, {
      metadata: { name: "tagged", namespace: `${NS}-other`, labels: { tier: "front" } },
      spec: { ports: [{ name: "http", port: 80 }] },
    });
    // The API server labels every namespace with its own name.
    const selected = Resolver.fromCorefile(
      corefile(
        `       kubeconfig ${cp.kubeconfigPath}\n       labels tier in (front, back)\n       namespace_labels kubernetes.io/metadata.name=${NS}`,
      ),
      { env: {}, deps: { log: () => {} }, address: "127.0.0.1", portOverride: 0 },
    );
    await selected.start();
    try {
      const p = selected.servers[0]?.address.port ?? 0;
      assert.deepEqual(short(await dig(p, `tagged.${NS}.svc.${ZONE}`, "A", "+short")), [
        tagged.spec?.clusterIP,
      ]);
      assert.equal(status(await dig(p, `web.${NS}.svc.${ZONE}`, "A")), "NXDOMAIN");
      assert.equal(status(await dig(p, `tagged.${NS}-other.svc.${ZONE}`, "A")), "NXDOMAIN");
      assert.equal(status(await dig(p, `${NS}-other.svc.${ZONE}`, "A")), "NXDOMAIN");
    } finally {
      await selected.stop();
    }
  });

  test("startup_timeout: an unreachable API server is waited for, then misses are SERVFAIL", async () => {
    const lines: string[] = [];
    let readyPort = 0;
    const down = Resolver.fromCorefile(
      corefile("       endpoint http://127.0.0.1:1\n       startup_timeout 300ms"),
      {
        env: {},
        deps: { log: (l) => lines.push(l), onHttpListen: (_p, port) => (readyPort = port) },
        address: "127.0.0.1",
        portOverride: 0,
      },
    );
    await down.start();
    try {
      assert.ok(lines.includes("[WARNING] plugin/kubernetes: starting server with unsynced Kubernetes API"));
      // Why it never synced is in the log too, as CoreDNS shows client-go's list failures. Each informer logs
      // its first failure as soon as it runs, which on a busy machine can be after the 300 ms.
      for (const resource of ["services", "namespaces", "endpointslices"]) {
        const failed = new RegExp(
          `^\\[ERROR\\] plugin/kubernetes: ${resource}: list/watch failed, retrying: .*ECONNREFUSED`,
        );
        await eventually(
          `a list failure for ${resource} in the log`,
          () => lines.some((l) => failed.test(l)),
          {
            timeoutMs: 10_000,
            describe: () => JSON.stringify(lines),
          },
        );
      }
      const downPort = down.servers[0]?.address.port ?? 0;
      assert.equal(status(await dig(downPort, `web.${NS}.svc.${ZONE}`, "A")), "SERVFAIL");
      // /ready says why, not only that: the names CoreDNS gives, then one line per informer not synced.
      const ready = await fetch(`http://127.0.0.1:${readyPort}/ready`);
      const body = (await ready.text()).split("\n");
      assert.equal(ready.status, 503);
      assert.equal(body[0], "kubernetes");
      for (const resource of ["services", "namespaces", "endpointslices"]) {
        assert.ok(
          body.some((l) => new RegExp(`^kubernetes: ${resource}: list/watch failed: .*ECONNREFUSED`).test(l)),
          `no cause for ${resource} in ${JSON.stringify(body)}`,
        );
      }
    } finally {
      await down.stop();
    }
  });
});
