import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  compareQueries,
  differentialSkip,
  type Pair,
  type Server,
  startPair,
} from "../src/testing/differential.js";

// The autopath plugin's file form, compared with CoreDNS's binary. The search path is a pod's in
// namespace `ns` plus one site domain; templates answer the cluster names (NXDOMAIN for all but one) and
// hosts the rest (SERVFAIL for names it lacks, as upstream's hosts without fallthrough).
const skip = differentialSkip();

const RESOLV =
  "nameserver 10.96.0.10\nsearch ns.svc.cluster.local svc.cluster.local Example.COM\noptions ndots:5\n";

const corefile = (autopath: string) => `.:{{PORT}} {
    autopath ${autopath}
    prometheus 127.0.0.1:{{FREE1}}
    template IN A cluster.local {
        match ^api[.]ns[.]svc[.]cluster[.]local[.]$
        answer "{{ .Name }} 30 IN A 10.96.0.20"
        fallthrough
    }
    template ANY ANY cluster.local {
        rcode NXDOMAIN
        authority "cluster.local. 30 {{ .Class }} SOA ns.dns.cluster.local. hostmaster.cluster.local. (1 7200 1800 86400 30)"
    }
    hosts {
        192.0.2.10 web.example.com
        192.0.2.99 bare
        ttl 300
    }
}
`;

/**
 * The autopath counter's lines on a server's /metrics. (Not `coredns_dns_responses_total{plugin}`: for the
 * queries autopath passes on, upstream names autopath and we the plugin that answered; see the README.)
 */
async function successLines(s: Server): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${s.free.get("{{FREE1}}")}/metrics`)).text();
  return text
    .split("\n")
    .filter((l) => l.includes("coredns_autopath_success_total"))
    .join("\n");
}

describe("autopath, against CoreDNS v1.14.7", { skip }, () => {
  describe("a resolv.conf search path", () => {
    let pair: Pair;
    before(async () => {
      pair = await startPair(corefile(". resolv.conf"), { "resolv.conf": RESOLV });
    });
    after(() => pair?.stop());
    compareQueries(
      () => pair,
      [
        // Resolved under a later search domain: a CNAME from the asked name, then the answer.
        ["web.ns.svc.cluster.local", "A"],
        ["web.ns.svc.cluster.local", "A", "+tcp"],
        ["Web.NS.svc.Cluster.local", "A"],
        // The bare name, tried last.
        ["bare.ns.svc.cluster.local", "A"],
        // The first try resolves: no CNAME.
        ["api.ns.svc.cluster.local", "A"],
        // NODATA under a later domain stops the walk.
        ["web.ns.svc.cluster.local", "MX"],
        // Nothing resolves: the first reply (NXDOMAIN), its question in the search path's case.
        ["nope.ns.svc.cluster.local", "A"],
        ["Nope.NS.svc.cluster.local", "AAAA"],
        ["api.ns.svc.cluster.local", "AAAA"],
        // Not under the first search domain: not autopathed.
        ["web.svc.cluster.local", "A"],
        ["web.example.com", "A"],
        ["unknown.test", "A"],
        // The first search domain itself: upstream's TrimZone has no base name left, SERVFAIL.
        ["ns.svc.cluster.local", "A"],
      ],
    );
    test("coredns_autopath_success_total counts the same", async () => {
      await pair.dig("web.ns.svc.cluster.local", "A");
      const [ours, theirs] = await Promise.all([successLines(pair.ours), successLines(pair.coredns)]);
      assert.match(theirs, /coredns_autopath_success_total\{server="dns:\/\/:\d+"\} \d+/);
      assert.equal(ours.replace(/:\d+"/g, ':P"'), theirs.replace(/:\d+"/g, ':P"'));
    });
  });

  describe("zones and an empty search list", () => {
    let zoned: Pair;
    let empty: Pair;
    before(async () => {
      zoned = await startPair(corefile("example.org resolv.conf"), { "resolv.conf": RESOLV });
      empty = await startPair(corefile(". resolv.conf"), { "resolv.conf": "nameserver 10.96.0.10\n" });
    });
    after(async () => {
      await zoned?.stop();
      await empty?.stop();
    });
    compareQueries(() => zoned, [["web.ns.svc.cluster.local", "A"]]);
    compareQueries(
      () => empty,
      [
        ["web.ns.svc.cluster.local", "A"],
        ["web.example.com", "A"],
      ],
    );
  });
});
