import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Upstream } from "../../src/plugin/pkg/upstream.js";
import type { Outcome } from "../../src/plugins/kubernetes/answer.js";
import { answer } from "../../src/plugins/kubernetes/answer.js";
import type { KubernetesOptions } from "../../src/plugins/kubernetes/options.js";
import { defaultOptions } from "../../src/plugins/kubernetes/options.js";
import { rcodeName, typeNumber } from "../../src/wire/constants.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { formatRecord, parseRecord } from "../../src/wire/presentation.js";
import { fixtureCluster, services } from "./fixture.js";

const SOA =
  "cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1700000000 7200 1800 86400 30";

interface Case {
  qname: string;
  qtype: string;
  rcode?: string;
  answer?: string[];
  ns?: string[];
  extra?: string[];
  /** the plugin passes the query on */
  next?: boolean;
}

function options(over: Partial<KubernetesOptions> = {}): KubernetesOptions {
  return { ...defaultOptions(["cluster.local.", "in-addr.arpa.", "ip6.arpa."]), ttl: 30, ...over };
}

async function run(c: Case, opts = options(), view = fixtureCluster(), upstream?: Upstream): Promise<void> {
  const frozen = structuredClone(services);
  const out: Outcome = await answer(view, opts, newQuery(c.qname, typeNumber(c.qtype) ?? 0), upstream);
  assert.deepEqual(services, frozen, "cluster objects must not be mutated");
  if (c.next) {
    assert.equal(out.action, "next", `${c.qname} ${c.qtype}`);
    return;
  }
  assert.equal(out.action, "reply", `${c.qname} ${c.qtype}: ${JSON.stringify(out)}`);
  if (out.action !== "reply") return;
  const r = out.reply;
  const label = `${c.qname} ${c.qtype}`;
  assert.equal(rcodeName(r.rcode), c.rcode ?? "NOERROR", label);
  assert.equal(r.aa, true, `${label}: authoritative`);
  assert.deepEqual(r.answer.map(formatRecord).sort(), [...(c.answer ?? [])].sort(), `${label}: answer`);
  assert.deepEqual(r.authority.map(formatRecord), c.ns ?? [], `${label}: authority`);
  assert.deepEqual(
    r.additional.map(formatRecord).sort(),
    [...(c.extra ?? [])].sort(),
    `${label}: additional`,
  );
}

const cases: Case[] = [
  // Spec 2.2: schema version.
  {
    qname: "dns-version.cluster.local.",
    qtype: "TXT",
    answer: ['dns-version.cluster.local. 28800 IN TXT "1.1.0"'],
  },
  // 2.3.1 ClusterIP A/AAAA, dual stack.
  {
    qname: "svc1.testns.svc.cluster.local.",
    qtype: "A",
    answer: ["svc1.testns.svc.cluster.local. 30 IN A 172.30.0.10"],
  },
  { qname: "svc1.testns.svc.cluster.local.", qtype: "AAAA", ns: [SOA] },
  {
    qname: "dual.testns.svc.cluster.local.",
    qtype: "AAAA",
    answer: ["dual.testns.svc.cluster.local. 30 IN AAAA fd00:30::20"],
  },
  // A ClusterIP service answers even with no endpoints.
  {
    qname: "empty.testns.svc.cluster.local.",
    qtype: "A",
    answer: ["empty.testns.svc.cluster.local. 30 IN A 172.30.0.30"],
  },
  // 2.3.2 SRV for named ports.
  {
    qname: "_http._tcp.svc1.testns.svc.cluster.local.",
    qtype: "SRV",
    answer: ["_http._tcp.svc1.testns.svc.cluster.local. 30 IN SRV 0 100 80 svc1.testns.svc.cluster.local."],
    extra: ["svc1.testns.svc.cluster.local. 30 IN A 172.30.0.10"],
  },
  {
    qname: "_dns._udp.svc1.testns.svc.cluster.local.",
    qtype: "SRV",
    answer: ["_dns._udp.svc1.testns.svc.cluster.local. 30 IN SRV 0 100 53 svc1.testns.svc.cluster.local."],
    extra: ["svc1.testns.svc.cluster.local. 30 IN A 172.30.0.10"],
  },
  { qname: "_http._udp.svc1.testns.svc.cluster.local.", qtype: "SRV", rcode: "NXDOMAIN", ns: [SOA] },
  // The bare service name with SRV lists every port (beyond the spec, as CoreDNS does).
  {
    qname: "svc1.testns.svc.cluster.local.",
    qtype: "SRV",
    answer: [
      "svc1.testns.svc.cluster.local. 30 IN SRV 0 50 80 svc1.testns.svc.cluster.local.",
      "svc1.testns.svc.cluster.local. 30 IN SRV 0 50 53 svc1.testns.svc.cluster.local.",
    ],
    extra: ["svc1.testns.svc.cluster.local. 30 IN A 172.30.0.10"],
  },
  // Dual-stack ClusterIP: two matches, weight 50.
  {
    qname: "_http._tcp.dual.testns.svc.cluster.local.",
    qtype: "SRV",
    answer: ["_http._tcp.dual.testns.svc.cluster.local. 30 IN SRV 0 50 80 dual.testns.svc.cluster.local."],
    extra: [
      "dual.testns.svc.cluster.local. 30 IN A 172.30.0.20",
      "dual.testns.svc.cluster.local. 30 IN AAAA fd00:30::20",
    ],
  },
  // 2.4.1 headless: ready endpoints only (ready unset counts as ready).
  {
    qname: "hdls.testns.svc.cluster.local.",
    qtype: "A",
    answer: [
      "hdls.testns.svc.cluster.local. 30 IN A 10.0.0.1",
      "hdls.testns.svc.cluster.local. 30 IN A 10.0.0.2",
      "hdls.testns.svc.cluster.local. 30 IN A 10.0.0.4",
    ],
  },
  {
    qname: "hdls6.testns.svc.cluster.local.",
    qtype: "AAAA",
    answer: ["hdls6.testns.svc.cluster.local. 30 IN AAAA fd00::5"],
  },
  {
    qname: "web-0.hdls.testns.svc.cluster.local.",
    qtype: "A",
    answer: ["web-0.hdls.testns.svc.cluster.local. 30 IN A 10.0.0.1"],
  },
  {
    qname: "10-0-0-2.hdls.testns.svc.cluster.local.",
    qtype: "A",
    answer: ["10-0-0-2.hdls.testns.svc.cluster.local. 30 IN A 10.0.0.2"],
  },
  {
    qname: "fd00--5.hdls6.testns.svc.cluster.local.",
    qtype: "AAAA",
    answer: ["fd00--5.hdls6.testns.svc.cluster.local. 30 IN AAAA fd00::5"],
  },
  // A not-ready endpoint has no name.
  { qname: "10-0-0-3.hdls.testns.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
  // Spec: headless with no ready endpoints is NXDOMAIN.
  { qname: "emptyhdls.testns.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
  // An endpoint name also works under a ClusterIP service.
  {
    qname: "10-0-0-1.svc1.testns.svc.cluster.local.",
    qtype: "A",
    answer: ["10-0-0-1.svc1.testns.svc.cluster.local. 30 IN A 10.0.0.1"],
  },
  // 2.4.2 headless SRV: endpoints x named ports, weight floor(100/3) = 33.
  {
    qname: "_http._tcp.hdls.testns.svc.cluster.local.",
    qtype: "SRV",
    answer: [
      "_http._tcp.hdls.testns.svc.cluster.local. 30 IN SRV 0 33 80 web-0.hdls.testns.svc.cluster.local.",
      "_http._tcp.hdls.testns.svc.cluster.local. 30 IN SRV 0 33 80 10-0-0-2.hdls.testns.svc.cluster.local.",
      "_http._tcp.hdls.testns.svc.cluster.local. 30 IN SRV 0 33 80 10-0-0-4.hdls.testns.svc.cluster.local.",
    ],
    extra: [
      "web-0.hdls.testns.svc.cluster.local. 30 IN A 10.0.0.1",
      "10-0-0-2.hdls.testns.svc.cluster.local. 30 IN A 10.0.0.2",
      "10-0-0-4.hdls.testns.svc.cluster.local. 30 IN A 10.0.0.4",
    ],
  },
  // A slice without ports: A works, SRV has nothing to say.
  {
    qname: "noports.testns.svc.cluster.local.",
    qtype: "A",
    answer: ["noports.testns.svc.cluster.local. 30 IN A 10.0.0.9"],
  },
  { qname: "noports.testns.svc.cluster.local.", qtype: "SRV", ns: [SOA] },
  // 2.3.3 / 2.4.3 PTR.
  {
    qname: "10.0.30.172.in-addr.arpa.",
    qtype: "PTR",
    answer: ["10.0.30.172.in-addr.arpa. 30 IN PTR svc1.testns.svc.cluster.local."],
  },
  {
    qname: "0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.3.0.0.0.0.d.f.ip6.arpa.",
    qtype: "PTR",
    answer: [
      "0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.3.0.0.0.0.d.f.ip6.arpa. 30 IN PTR dual.testns.svc.cluster.local.",
    ],
  },
  // One endpoint IP selected by two services gets two PTRs.
  {
    qname: "1.0.0.10.in-addr.arpa.",
    qtype: "PTR",
    answer: [
      "1.0.0.10.in-addr.arpa. 30 IN PTR 10-0-0-1.svc1.testns.svc.cluster.local.",
      "1.0.0.10.in-addr.arpa. 30 IN PTR web-0.hdls.testns.svc.cluster.local.",
    ],
  },
  // 2.5 ExternalName.
  {
    qname: "ext.testns.svc.cluster.local.",
    qtype: "CNAME",
    answer: ["ext.testns.svc.cluster.local. 30 IN CNAME example.org."],
  },
  {
    qname: "extin.testns.svc.cluster.local.",
    qtype: "A",
    answer: [
      "extin.testns.svc.cluster.local. 30 IN CNAME svc1.testns.svc.cluster.local.",
      "svc1.testns.svc.cluster.local. 30 IN A 172.30.0.10",
    ],
  },
  { qname: "foo.ext.testns.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
  { qname: "_http._tcp.ext.testns.svc.cluster.local.", qtype: "SRV", rcode: "NXDOMAIN", ns: [SOA] },
  // NODATA vs NXDOMAIN by name grammar: empty non-terminals exist.
  { qname: "cluster.local.", qtype: "A", ns: [SOA] },
  { qname: "svc.cluster.local.", qtype: "A", ns: [SOA] },
  { qname: "testns.svc.cluster.local.", qtype: "A", ns: [SOA] },
  { qname: "pod.cluster.local.", qtype: "A", ns: [SOA] },
  { qname: "nons.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
  { qname: "nosvc.testns.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
  { qname: "svc1.testns.bogus.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
  { qname: "a.b.c.svc1.testns.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
  // Types the plugin has no data for: NODATA if the name exists.
  { qname: "svc1.testns.svc.cluster.local.", qtype: "MX", ns: [SOA] },
  { qname: "svc1.testns.svc.cluster.local.", qtype: "TYPE65280", ns: [SOA] },
  { qname: "nosvc.testns.svc.cluster.local.", qtype: "TYPE65280", rcode: "NXDOMAIN", ns: [SOA] },
  { qname: "svc1.testns.svc.cluster.local.", qtype: "TXT", ns: [SOA] },
  // SOA at the apex, NODATA below it.
  { qname: "cluster.local.", qtype: "SOA", answer: [SOA] },
  { qname: "svc1.testns.svc.cluster.local.", qtype: "SOA", ns: [SOA] },
  { qname: "cluster.local.", qtype: "NS", answer: ["cluster.local. 30 IN NS ns.dns.cluster.local."] },
  // pods disabled (the default): pod names are NXDOMAIN.
  { qname: "10-0-0-1.testns.pod.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
  // Reverse names that are not ours: NXDOMAIN (no fallthrough configured here).
  {
    qname: "1.2.3.4.in-addr.arpa.",
    qtype: "PTR",
    rcode: "NXDOMAIN",
    ns: [
      "in-addr.arpa. 30 IN SOA ns.dns.in-addr.arpa. hostmaster.in-addr.arpa. 1700000000 7200 1800 86400 30",
    ],
  },
  // Not our zone at all.
  { qname: "example.org.", qtype: "A", next: true },
];

describe("kubernetes plugin records (DNS spec 1.1.0, CoreDNS behaviour)", () => {
  for (const c of cases) {
    test(`${c.qname} ${c.qtype} → ${c.next ? "next" : (c.rcode ?? "NOERROR")}`, () => run(c));
  }
});

describe("kubernetes plugin options", () => {
  test("case: owners keep the query spelling, the zone suffix in targets too", () =>
    run({
      qname: "_HTTP._TCP.Svc1.TestNS.svc.Cluster.Local.",
      qtype: "SRV",
      answer: ["_HTTP._TCP.Svc1.TestNS.svc.Cluster.Local. 30 IN SRV 0 100 80 svc1.testns.svc.Cluster.Local."],
      extra: ["svc1.testns.svc.Cluster.Local. 30 IN A 172.30.0.10"],
    }));

  test("case: negative answers carry the SOA owned by the zone as asked", () =>
    run({
      qname: "nosvc.testns.svc.CLUSTER.local.",
      qtype: "A",
      rcode: "NXDOMAIN",
      ns: [
        "CLUSTER.local. 30 IN SOA ns.dns.CLUSTER.local. hostmaster.CLUSTER.local. 1700000000 7200 1800 86400 30",
      ],
    }));

  test("pods insecure answers any IP-shaped label", async () => {
    const opts = options({ podMode: "insecure" });
    await run(
      {
        qname: "1-2-3-4.testns.pod.cluster.local.",
        qtype: "A",
        answer: ["1-2-3-4.testns.pod.cluster.local. 30 IN A 1.2.3.4"],
      },
      opts,
    );
    await run(
      {
        qname: "fd00--9.testns.pod.cluster.local.",
        qtype: "AAAA",
        answer: ["fd00--9.testns.pod.cluster.local. 30 IN AAAA fd00::9"],
      },
      opts,
    );
    await run(
      { qname: "not-an-ip.testns.pod.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
      opts,
    );
    await run({ qname: "1-2-3-4.nons.pod.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] }, opts);
  });

  test("pods verified answers only for a pod with that IP in that namespace", async () => {
    const opts = options({ podMode: "verified" });
    await run(
      {
        qname: "10-0-0-1.testns.pod.cluster.local.",
        qtype: "A",
        answer: ["10-0-0-1.testns.pod.cluster.local. 30 IN A 10.0.0.1"],
      },
      opts,
    );
    await run({ qname: "10-0-0-1.other.pod.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] }, opts);
    await run(
      { qname: "10-9-9-9.testns.pod.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
      opts,
    );
  });

  test("ttl sets every TTL, the SOA TTL caps at 300", async () => {
    const opts = options({ ttl: 3600 });
    await run(
      {
        qname: "nosvc.testns.svc.cluster.local.",
        qtype: "A",
        rcode: "NXDOMAIN",
        ns: [
          "cluster.local. 300 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1700000000 7200 1800 86400 3600",
        ],
      },
      opts,
    );
    await run(
      {
        qname: "svc1.testns.svc.cluster.local.",
        qtype: "A",
        answer: ["svc1.testns.svc.cluster.local. 3600 IN A 172.30.0.10"],
      },
      opts,
    );
  });

  test("fallthrough passes name errors on, only in its zones, never NODATA", async () => {
    const opts = options({ fallthrough: ["in-addr.arpa.", "ip6.arpa."] });
    await run({ qname: "1.2.3.4.in-addr.arpa.", qtype: "PTR", next: true }, opts);
    await run({ qname: "nosvc.testns.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] }, opts);
    const all = options({ fallthrough: [] });
    await run({ qname: "nosvc.testns.svc.cluster.local.", qtype: "A", next: true }, all);
    await run({ qname: "svc1.testns.svc.cluster.local.", qtype: "AAAA", ns: [SOA] }, all);
  });

  test("namespaces hides the others, in forward and reverse lookups", async () => {
    const opts = options({ namespaces: new Set(["other"]) });
    await run({ qname: "svc1.testns.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] }, opts);
    await run(
      {
        qname: "svc1.other.svc.cluster.local.",
        qtype: "A",
        answer: ["svc1.other.svc.cluster.local. 30 IN A 172.30.0.40"],
      },
      opts,
    );
    await run({ qname: "testns.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] }, opts);
    await run(
      {
        qname: "10.0.30.172.in-addr.arpa.",
        qtype: "PTR",
        rcode: "NXDOMAIN",
        ns: [
          "in-addr.arpa. 30 IN SOA ns.dns.in-addr.arpa. hostmaster.in-addr.arpa. 1700000000 7200 1800 86400 30",
        ],
      },
      opts,
    );
  });

  test("endpoint_pod_names names endpoints without hostname by their pod", async () => {
    const opts = options({ endpointPodNames: true });
    await run(
      {
        qname: "hdls-pod-b.hdls.testns.svc.cluster.local.",
        qtype: "A",
        answer: ["hdls-pod-b.hdls.testns.svc.cluster.local. 30 IN A 10.0.0.2"],
      },
      opts,
    );
    await run(
      { qname: "10-0-0-2.hdls.testns.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] },
      opts,
    );
  });

  test("ignore empty_service makes a ClusterIP service without ready endpoints NXDOMAIN", async () => {
    const opts = options({ ignoreEmptyService: true });
    await run({ qname: "empty.testns.svc.cluster.local.", qtype: "A", rcode: "NXDOMAIN", ns: [SOA] }, opts);
    await run(
      {
        qname: "svc1.testns.svc.cluster.local.",
        qtype: "A",
        answer: ["svc1.testns.svc.cluster.local. 30 IN A 172.30.0.10"],
      },
      opts,
    );
    await run(
      {
        qname: "ext.testns.svc.cluster.local.",
        qtype: "CNAME",
        answer: ["ext.testns.svc.cluster.local. 30 IN CNAME example.org."],
      },
      opts,
    );
  });

  test("before the caches sync a miss is SERVFAIL (with the SOA), a hit still answers", async () => {
    const view = fixtureCluster();
    view.synced = false;
    await run(
      { qname: "nosvc.testns.svc.cluster.local.", qtype: "A", rcode: "SERVFAIL", ns: [SOA] },
      options(),
      view,
    );
    await run(
      {
        qname: "svc1.testns.svc.cluster.local.",
        qtype: "A",
        answer: ["svc1.testns.svc.cluster.local. 30 IN A 172.30.0.10"],
      },
      options(),
      view,
    );
  });

  test("zone transfers are REFUSED without a reply", async () => {
    const out = await answer(fixtureCluster(), options(), newQuery("cluster.local.", 252));
    assert.deepEqual(out, { action: "rcode", rcode: 5 });
  });

  test("an ExternalName outside the zone is completed through the upstream", async () => {
    const upstream: Upstream = async (name, qtype) => {
      assert.equal(name, "example.org.");
      const r = replyTo(newQuery(name, qtype));
      r.answer = [parseRecord("example.org. 300 IN A 192.0.2.10")];
      return r;
    };
    await run(
      {
        qname: "ext.testns.svc.cluster.local.",
        qtype: "A",
        answer: [
          "ext.testns.svc.cluster.local. 30 IN CNAME example.org.",
          "example.org. 300 IN A 192.0.2.10",
        ],
      },
      options(),
      fixtureCluster(),
      upstream,
    );
    // A failing upstream drops the CNAME: NODATA.
    await run(
      { qname: "ext.testns.svc.cluster.local.", qtype: "A", ns: [SOA] },
      options(),
      fixtureCluster(),
      async () => undefined,
    );
  });
});
