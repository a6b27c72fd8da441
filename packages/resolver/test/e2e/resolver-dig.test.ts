import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Resolver } from "../../src/resolver.js";
import { dig } from "../helpers/clients.js";
import { fixtureCluster } from "../kubernetes/fixture.js";

const COREFILE = `.:53 {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    loadbalance
}
`;

describe("Resolver from a Corefile, queried with dig", () => {
  const errors: string[] = [];
  const resolver = Resolver.fromCorefile(COREFILE, {
    env: {},
    deps: { cluster: fixtureCluster(), errorLog: (l) => errors.push(l) },
    address: "127.0.0.1",
    portOverride: 0,
  });
  let port = 0;
  before(async () => {
    await resolver.start();
    port = resolver.servers[0]?.address.port ?? 0;
  });
  after(() => resolver.stop(100));

  test("A for a ClusterIP service", async () => {
    const out = await dig(port, "svc1.testns.svc.cluster.local", "A", "+noall", "+answer");
    assert.match(out, /^svc1\.testns\.svc\.cluster\.local\.\s+30\s+IN\s+A\s+172\.30\.0\.10$/m);
  });

  test("headless A over TCP lists ready endpoints", async () => {
    const out = await dig(port, "hdls.testns.svc.cluster.local", "A", "+tcp", "+short");
    assert.deepEqual(out.trim().split("\n").sort(), ["10.0.0.1", "10.0.0.2", "10.0.0.4"]);
  });

  test("SRV with glue in the additional section", async () => {
    const out = await dig(
      port,
      "_http._tcp.svc1.testns.svc.cluster.local",
      "SRV",
      "+noall",
      "+answer",
      "+additional",
    );
    assert.match(out, /SRV\s+0 100 80 svc1\.testns\.svc\.cluster\.local\./);
    assert.match(out, /^svc1\.testns\.svc\.cluster\.local\.\s+30\s+IN\s+A\s+172\.30\.0\.10$/m);
  });

  test("PTR via dig -x", async () => {
    const out = await dig(port, "-x", "172.30.0.10", "+short");
    assert.equal(out.trim(), "svc1.testns.svc.cluster.local.");
  });

  test("NXDOMAIN carries the SOA with CoreDNS's values", async () => {
    const out = await dig(port, "nosvc.testns.svc.cluster.local", "A");
    assert.match(out, /status: NXDOMAIN/);
    assert.match(out, /flags: qr aa rd;/);
    assert.match(
      out,
      /cluster\.local\.\s+30\s+IN\s+SOA\s+ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. 1700000000 7200 1800 86400 30/,
    );
  });

  test("0x20: the question and owners keep the client's spelling", async () => {
    const out = await dig(port, "SvC1.TeStNs.SvC.ClUsTeR.LoCaL", "A", "+noall", "+question", "+answer");
    assert.match(out, /^;SvC1\.TeStNs\.SvC\.ClUsTeR\.LoCaL\.\s+IN\s+A$/m);
    assert.match(out, /^SvC1\.TeStNs\.SvC\.ClUsTeR\.LoCaL\.\s+30\s+IN\s+A\s+172\.30\.0\.10$/m);
  });

  test("fallthrough at the end of the chain: SERVFAIL, logged by errors", async () => {
    const out = await dig(port, "-x", "192.0.2.1");
    assert.match(out, /status: SERVFAIL/);
    assert.ok(
      errors.some((l) =>
        /^\[ERROR\] plugin\/errors: 2 1\.2\.0\.192\.in-addr\.arpa\. PTR: plugin\/kubernetes: no next plugin found$/.test(
          l,
        ),
      ),
      errors.join("\n"),
    );
  });

  test("dns-version TXT and EDNS echo", async () => {
    const out = await dig(port, "dns-version.cluster.local", "TXT", "+edns=0", "+bufsize=1232");
    assert.match(out, /dns-version\.cluster\.local\.\s+28800\s+IN\s+TXT\s+"1\.1\.0"/);
    assert.match(out, /EDNS: version: 0, flags:; udp: 1232/);
  });

  test("EDNS version 1 gets BADVERS", async () => {
    const out = await dig(port, "svc1.testns.svc.cluster.local", "A", "+edns=1", "+noednsneg");
    assert.match(out, /status: BADVERS/);
  });
});
