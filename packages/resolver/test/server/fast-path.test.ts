import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { newEntry } from "../../src/plugins/cache/entry.js";
import { ReplyMemo } from "../../src/plugins/kubernetes/reply-memo.js";
import { Resolver } from "../../src/resolver.js";
import type { DispatchContext, Site } from "../../src/server/dispatch.js";
import { dispatch } from "../../src/server/dispatch.js";
import { answerFast } from "../../src/server/fast-path.js";
import { encodeMessage } from "../../src/wire/encode.js";
import type { Message } from "../../src/wire/message.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { peekQuery } from "../../src/wire/peek.js";
import { fixtureCluster } from "../kubernetes/fixture.js";

const SERVER = "dns://:53";

/** A fixture cluster that reports changes through `generation`, so the kubernetes plugin may keep replies. */
function changingCluster() {
  const cluster = Object.assign(fixtureCluster(), { changes: 1 });
  return Object.assign(cluster, { generation: () => cluster.changes });
}

function resolverSites(
  cache: boolean,
  cluster = changingCluster(),
): { sites: readonly Site[]; cluster: typeof cluster } {
  const resolver = Resolver.fromCorefile(
    `.:53 {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        ttl 30
    }
    ${cache ? "cache 30" : ""}
}`,
    { deps: { cluster, now: () => 1_700_000_000_000 } },
  );
  return { sites: resolver.config.servers[0]?.sites ?? [], cluster };
}

function ctx(sites: readonly Site[]): DispatchContext {
  return {
    sites,
    server: SERVER,
    transport: "udp",
    remote: { address: "127.0.0.1", port: 5353, family: "IPv4" },
  };
}

function query(name: string, type: number, edit: (m: Message) => void = () => undefined): Buffer {
  const m = newQuery(name, type, 0x1234);
  edit(m);
  return encodeMessage(m);
}

/** Plain queries the fast path takes: spelling, flags and EDNS vary; A, AAAA (NODATA), SRV, NXDOMAIN. */
const plain: [string, Buffer][] = [
  ["A", query("svc1.testns.svc.cluster.local.", 1)],
  ["A in mixed case", query("SvC1.TestNS.svc.Cluster.LOCAL.", 1)],
  [
    "A without RD, with CD",
    query("svc1.testns.svc.cluster.local.", 1, (m) => Object.assign(m, { rd: false, cd: true })),
  ],
  [
    "A with EDNS and DO",
    query("svc1.testns.svc.cluster.local.", 1, (m) => {
      m.edns = { udpSize: 1232, version: 0, dnssecOk: true, options: [] };
    }),
  ],
  ["headless A", query("hdls.testns.svc.cluster.local.", 1)],
  ["AAAA NODATA", query("svc1.testns.svc.cluster.local.", 28)],
  ["SRV", query("_http._tcp.svc1.testns.svc.cluster.local.", 33)],
  ["NXDOMAIN", query("nosuch.testns.svc.cluster.local.", 1)],
];

describe("fast path", () => {
  for (const cache of [true, false]) {
    const via = cache ? "cache hits" : "kept kubernetes replies";
    test(`${via}: the same bytes as the full path, for every plain query`, async () => {
      const { sites } = resolverSites(cache);
      const [, firstPacket] = plain[0] as [string, Buffer];
      assert.equal(answerFast(firstPacket, sites, SERVER, "udp"), undefined, "nothing kept yet");
      for (const [what, packet] of plain) {
        const first = await dispatch(packet, ctx(sites));
        const fast = answerFast(packet, sites, SERVER, "udp");
        const slow = await dispatch(packet, ctx(sites));
        assert.ok(fast?.reply && slow.reply && first.reply, what);
        assert.deepEqual(fast.reply, slow.reply, `${what}: fast and full replies differ`);
        assert.equal(fast.plugin, slow.plugin ?? first.plugin, what);
        assert.equal(fast.rcode, slow.rcode, what);
        assert.equal(fast.qtype, peekQuery(packet)?.qtype, what);
      }
    });
  }

  test("kubeadm's chain (loadbalance, cache disabled for cluster.local): the same bytes as the full path", async () => {
    const cluster = changingCluster();
    // A fixed draw per n, so the full path and the fast path shuffle alike; for 3 records it moves them.
    const random = (n: number) => Math.floor(n / 2);
    const resolver = Resolver.fromCorefile(
      `.:53 {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 60
    }
    cache 30 {
        disable success cluster.local
        disable denial cluster.local
    }
    loadbalance
}`,
      { deps: { cluster, random, now: () => 1_700_000_000_000 } },
    );
    const sites = resolver.config.servers[0]?.sites ?? [];
    const headlessSrv = query("_http._tcp.hdls.testns.svc.cluster.local.", 33);
    const cases: [string, Buffer][] = [...plain, ["headless SRV (records of several owners)", headlessSrv]];
    for (const [what, packet] of cases) {
      const first = await dispatch(packet, ctx(sites));
      const fast = answerFast(packet, sites, SERVER, "udp");
      const slow = await dispatch(packet, ctx(sites));
      assert.ok(fast?.reply && slow.reply && first.reply, `${what}: answered from bytes`);
      assert.deepEqual(fast.reply, slow.reply, `${what}: fast and full replies differ`);
      assert.equal(fast.plugin, "kubernetes", what);
      assert.equal(fast.rcode, slow.rcode, what);
    }
    // The cache caps every TTL at 30 as it passes replies on (kubernetes says 60), fast or not.
    const fast = answerFast(plain[0]?.[1] as Buffer, sites, SERVER, "udp");
    assert.ok(fast?.reply);
    assert.equal(fast.reply.readUInt32BE(fast.reply.length - 10), 30);
    // Misses are counted as the full path counts them: every query above, none a hit.
    const text = await resolver.config.deps.metrics?.text();
    const count = (name: string) =>
      Number(new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, "m").exec(text ?? "")?.[1]);
    assert.equal(count("coredns_cache_requests_total"), cases.length * 3 + 1);
    assert.equal(count("coredns_cache_misses_total"), cases.length * 3 + 1);
  });

  test("kept replies and cache entries own their bytes (no pool slab kept alive with them)", () => {
    const reply = replyTo(newQuery("a.example.", 1));
    const wire = encodeMessage(reply);
    assert.ok(wire.buffer.byteLength > wire.length, "a small encoding is a slice of the pool");
    const memo = new ReplyMemo();
    memo.set("k", 1, wire);
    assert.equal(memo.get("k", 1)?.buffer.byteLength, wire.length);
    const entry = newEntry(reply, "noerror", 30, 0);
    assert.equal(entry.wire.buffer.byteLength, entry.wire.length);
  });

  test("a cluster change drops kept kubernetes replies", async () => {
    const { sites, cluster } = resolverSites(false);
    const [, packet] = plain[0] as [string, Buffer];
    await dispatch(packet, ctx(sites));
    assert.ok(answerFast(packet, sites, SERVER, "udp"));
    cluster.changes++;
    assert.equal(answerFast(packet, sites, SERVER, "udp"), undefined);
  });

  test("a view without generation is asked every time", async () => {
    const { sites } = resolverSites(
      false,
      Object.assign(fixtureCluster(), { generation: undefined }) as never,
    );
    const [, packet] = plain[0] as [string, Buffer];
    await dispatch(packet, ctx(sites));
    assert.equal(answerFast(packet, sites, SERVER, "udp"), undefined);
  });

  test("anything but the plainest query goes the full way", async () => {
    const { sites } = resolverSites(true);
    const name = "svc1.testns.svc.cluster.local.";
    const primed = query(name, 1);
    await dispatch(primed, ctx(sites));
    assert.ok(answerFast(primed, sites, SERVER, "udp"), "primed");
    const cookie = query(name, 1, (m) => {
      m.edns = { udpSize: 1232, version: 0, dnssecOk: false, options: [{ code: 10, data: Buffer.alloc(8) }] };
    });
    const notify = query(name, 1, (m) => Object.assign(m, { opcode: 4 }));
    const badvers = query(name, 1, (m) => {
      m.edns = { udpSize: 1232, version: 1, dnssecOk: false, options: [] };
    });
    const trailing = Buffer.concat([primed, Buffer.from([0])]);
    const response = Buffer.from(primed);
    response[2] = (response[2] as number) | 0x80;
    const chaos = query(name, 1, (m) => Object.assign(m, { question: [{ name, type: 1, class: 3 }] }));
    for (const [what, packet] of Object.entries({ cookie, notify, badvers, trailing, response, chaos }))
      assert.equal(answerFast(packet, sites, SERVER, "udp"), undefined, what);
  });

  test("peekQuery reads the name lower-cased in presentation form, and refuses escapes", () => {
    assert.equal(peekQuery(query("A-b_C.Example.ORG.", 1))?.name, "a-b_c.example.org.");
    assert.equal(peekQuery(query(".", 2))?.name, ".");
    assert.equal(peekQuery(query("a\\.b.example.org.", 1)), undefined);
    assert.equal(peekQuery(query("a\\032b.example.org.", 1)), undefined);
  });
});
