import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Resolver } from "../../src/resolver.js";
import { DnsServer } from "../../src/server/dns-server.js";
import { dig } from "../helpers/clients.js";
import { staticZone } from "../helpers/static-zone.js";
import { STOCK_COREFILE } from "../helpers/stock-corefile.js";
import { fixtureCluster } from "../kubernetes/fixture.js";

describe("the stock kubeadm Corefile, end to end with dig", () => {
  const upstream = new DnsServer({
    sites: [{ zone: ".", handler: staticZone(["example.org. 300 IN A 192.0.2.80"]) }],
    address: "127.0.0.1",
    port: 0,
  });
  const http = new Map<string, number>();
  let resolver: Resolver;
  let port = 0;

  before(async () => {
    await upstream.start();
    const corefile = STOCK_COREFILE.replace("/etc/resolv.conf", `127.0.0.1:${upstream.address.port}`)
      .replace("health {", "health 127.0.0.1:0 {")
      .replace("ready\n", "ready 127.0.0.1:0\n")
      .replace("prometheus :9153", "prometheus 127.0.0.1:0");
    resolver = Resolver.fromCorefile(corefile, {
      env: {},
      deps: {
        cluster: fixtureCluster(),
        errorLog: () => undefined,
        sleep: async () => undefined,
        onHttpListen: (plugin, p) => http.set(plugin, p),
        fatal: (m) => assert.fail(m),
      },
      address: "127.0.0.1",
      portOverride: 0,
    });
    await resolver.start();
    port = resolver.servers[0]?.address.port ?? 0;
  });
  after(async () => {
    await resolver.stop(100);
    await upstream.stop(100);
  });

  test("a forwarded name, then a cache hit whose TTL is capped at 30 and counts down", async () => {
    const first = await dig(port, "example.org", "A", "+noall", "+answer");
    assert.match(first, /^example\.org\.\s+30\s+IN\s+A\s+192\.0\.2\.80$/m);
    await new Promise((r) => setTimeout(r, 2100));
    const second = await dig(port, "example.org", "A", "+noall", "+answer");
    const ttl = Number(/^example\.org\.\s+(\d+)/m.exec(second)?.[1]);
    assert.ok(ttl < 30 && ttl >= 20, `TTL ${ttl} should have counted down from 30`);
  });

  test("a cluster name", async () => {
    const out = await dig(port, "svc1.testns.svc.cluster.local", "A", "+short");
    assert.equal(out.trim(), "172.30.0.10");
  });

  test("/metrics shows requests, responses by plugin, and cache hits", async () => {
    const res = await fetch(`http://127.0.0.1:${http.get("prometheus")}/metrics`);
    const text = await res.text();
    assert.match(
      text,
      /coredns_dns_requests_total\{server="dns:\/\/127\.0\.0\.1:\d+",zone="\.",view="",proto="udp",family="1",type="A"\} \d+/,
    );
    assert.match(text, /coredns_dns_responses_total\{[^}]*rcode="NOERROR",plugin="cache"\} [1-9]/);
    assert.match(text, /coredns_dns_responses_total\{[^}]*rcode="NOERROR",plugin="forward"\} [1-9]/);
    assert.match(text, /coredns_cache_hits_total\{[^}]*type="success"\} [1-9]/);
    assert.match(text, /coredns_plugin_enabled\{[^}]*name="kubernetes"\} 1/);
  });
});
