import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import * as net from "node:net";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { eventually } from "@switchyard/kube/testing";
import type { Handler, Result } from "../../src/plugin/handler.js";
import { DnsServer, literalFamily, peerOf } from "../../src/server/dns-server.js";
import { FrameSplitter, frame } from "../../src/server/frames.js";
import { encodeMessage } from "../../src/wire/encode.js";
import { newQuery, replyTo } from "../../src/wire/message.js";
import { formatRecord } from "../../src/wire/presentation.js";
import { decodeOrFail, dig, tcpSession, udpExchange } from "../helpers/clients.js";
import { staticZone } from "../helpers/static-zone.js";

const run = promisify(execFile);

const zone = staticZone([
  "www.example.org. 30 IN A 192.0.2.1",
  "www.example.org. 30 IN AAAA 2001:db8::1",
  ...Array.from({ length: 60 }, (_, i) => `big.example.org. 30 IN A 10.1.0.${i + 1}`),
]);

/** Answers "slow." after a delay, to show TCP replies keep their order. */
/** Resolves the next time `slow` receives a query, so a test can act while a query is in flight. */
let queryReceived: () => void = () => {};
const nextQuery = () => new Promise<void>((r) => (queryReceived = r));

const slow: Handler = {
  name: "slow",
  async serveDNS(_ctx, w, r): Promise<Result> {
    queryReceived();
    await new Promise((res) => setTimeout(res, 50));
    const reply = replyTo(r);
    reply.answer = [{ name: r.question[0]?.name ?? ".", type: "A", class: 1, ttl: 1, data: "192.0.2.99" }];
    w.write(reply);
    return { rcode: 0 };
  },
};

describe("DnsServer on loopback", () => {
  const server = new DnsServer({
    sites: [
      { zone: "example.org.", handler: zone },
      { zone: "slow.", handler: slow },
    ],
    address: "127.0.0.1",
    port: 0,
    tcpFirstReadTimeoutMs: 300,
    tcpIdleTimeoutMs: 300,
    maxTcpConnections: 4,
  });
  let port = 0;
  before(async () => {
    await server.start();
    port = server.address.port;
  });
  after(() => server.stop(100));

  test("dig gets an answer over UDP", async () => {
    const out = await dig(port, "www.example.org", "A", "+short");
    assert.equal(out.trim(), "192.0.2.1");
  });

  test("dig gets an answer over TCP", async () => {
    const out = await dig(port, "www.example.org", "AAAA", "+tcp", "+short");
    assert.equal(out.trim(), "2001:db8::1");
  });

  test("dig sees TC over UDP without EDNS and retries over TCP for the full answer", async () => {
    const truncated = await dig(port, "big.example.org", "A", "+noedns", "+ignore");
    assert.match(truncated, /flags: qr aa tc rd;/);
    const full = await dig(port, "big.example.org", "A", "+noedns", "+short");
    assert.equal(full.trim().split("\n").length, 60);
  });

  test("dig: 0x20 spelling comes back, NXDOMAIN for a missing name, REFUSED outside the zones", async () => {
    const mixed = await dig(port, "wWw.ExAmPlE.oRg", "A");
    assert.match(mixed, /;wWw\.ExAmPlE\.oRg\.\s+IN\s+A/);
    assert.match(await dig(port, "nope.example.org", "A"), /status: NXDOMAIN/);
    assert.match(await dig(port, "www.example.com", "A"), /status: REFUSED/);
  });

  test("garbage over UDP is dropped", async () => {
    assert.equal(await udpExchange(port, Buffer.from("hello"), 200), undefined);
  });

  test("a raw UDP client gets a decodable reply with its id", async () => {
    const reply = await udpExchange(port, encodeMessage(newQuery("www.example.org.", 1, 777)));
    assert.ok(reply);
    const msg = decodeOrFail(reply);
    assert.equal(msg.id, 777);
    assert.deepEqual(msg.answer.map(formatRecord), ["www.example.org. 30 IN A 192.0.2.1"]);
  });

  test("pipelined TCP queries are answered in arrival order", async () => {
    const s = await tcpSession(port);
    const first = encodeMessage(newQuery("a.slow.", 1, 1));
    const second = encodeMessage(newQuery("www.example.org.", 1, 2));
    const third = encodeMessage(newQuery("b.slow.", 1, 3));
    // One write, three frames, the middle one split across two writes to test reassembly.
    const all = Buffer.concat([frame(first), frame(second), frame(third)]);
    s.socket.write(all.subarray(0, frame(first).length + 5));
    s.socket.write(all.subarray(frame(first).length + 5));
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(decodeOrFail(await s.next()).id);
    assert.deepEqual(ids, [1, 2, 3]);
    s.socket.destroy();
  });

  test("a client that half-closes after pipelining gets every reply, as from CoreDNS", async () => {
    const client = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    await new Promise((r) => client.once("connect", r));
    const ids = [11, 12, 13];
    client.end(Buffer.concat(ids.map((id) => frame(encodeMessage(newQuery("a.slow.", 1, id))))));
    const chunks: Buffer[] = [];
    for await (const chunk of client) chunks.push(chunk as Buffer);
    const got = new FrameSplitter().push(Buffer.concat(chunks)).map((f) => decodeOrFail(f).id);
    assert.deepEqual(got, ids);
  });

  test("an idle TCP connection is closed after the first-read timeout", async () => {
    const s = await tcpSession(port);
    const started = Date.now();
    await s.closed;
    assert.ok(Date.now() - started >= 250);
  });
});

describe("DnsServer at its TCP connection cap", () => {
  /** Holds each query until the test lets it go: a connection busy answering. */
  const releases: (() => void)[] = [];
  const held: Handler = {
    name: "held",
    async serveDNS(_ctx, w, r): Promise<Result> {
      await new Promise<void>((release) => releases.push(release));
      w.write(replyTo(r));
      return { rcode: 0 };
    },
  };
  const server = new DnsServer({
    sites: [
      { zone: "example.org.", handler: zone },
      { zone: "held.", handler: held },
    ],
    address: "127.0.0.1",
    port: 0,
    // Long enough that no connection of these tests is closed by a deadline.
    tcpFirstReadTimeoutMs: 60_000,
    tcpIdleTimeoutMs: 60_000,
    maxTcpConnections: 4,
  });
  let port = 0;
  before(async () => {
    await server.start();
    port = server.address.port;
  });
  after(() => server.stop(100));

  test("a new connection takes the place of the one that has waited longest for a query", async () => {
    const open = [];
    for (let i = 0; i < 4; i++) open.push(await tcpSession(port));
    const extra = await tcpSession(port);
    await open[0]?.closed;
    extra.socket.write(frame(encodeMessage(newQuery("www.example.org.", 1, 9))));
    assert.equal(decodeOrFail(await extra.next()).id, 9);
    for (const s of open.slice(1)) assert.equal(s.socket.readyState, "open");
    for (const s of [...open, extra]) s.socket.destroy();
  });

  test("with every connection busy answering, a new one is closed at once", async () => {
    const busy = [];
    for (let i = 0; i < 4; i++) {
      const s = await tcpSession(port);
      s.socket.write(frame(encodeMessage(newQuery(`q${i}.held.`, 1, i))));
      busy.push(s);
    }
    await eventually("all four held", () => releases.length === 4);
    const extra = await tcpSession(port);
    await extra.closed;
    assert.equal(extra.replies.length, 0);
    for (const release of releases.splice(0)) release();
    for (const s of busy) assert.equal(decodeOrFail(await s.next()).rcode, 0);
    for (const s of busy) s.socket.destroy();
  });
});

describe("DnsServer without an address", () => {
  // Reports the client as plugins see it, in the answer: A for an IPv4 client, AAAA for an IPv6 one.
  const whoSent: Handler = {
    name: "who",
    async serveDNS(_ctx, w, r): Promise<Result> {
      const reply = replyTo(r);
      const type = w.remote.family === "IPv6" ? "AAAA" : "A";
      reply.answer = [{ name: r.question[0]?.name ?? ".", type, class: 1, ttl: 1, data: w.remote.address }];
      w.write(reply);
      return { rcode: 0 };
    },
  };
  const server = new DnsServer({ sites: [{ zone: ".", handler: whoSent }], port: 0 });
  let port = 0;
  before(async () => {
    await server.start();
    port = server.address.port;
  });
  after(() => server.stop(100));

  test("listens on both families, as CoreDNS's `.:53` does", async () => {
    assert.equal(server.address.address, "::");
    assert.equal((await dig(port, "who.", "A", "+short")).trim(), "127.0.0.1");
    const v6 = await run("dig", ["@::1", "-p", String(port), "+time=2", "+tries=1", "+short", "who."]);
    assert.equal(v6.stdout.trim(), "::1");
    const tcp = await run("dig", [
      "@127.0.0.1",
      "-p",
      String(port),
      "+time=2",
      "+tries=1",
      "+short",
      "+tcp",
      "who.",
    ]);
    assert.equal(tcp.stdout.trim(), "127.0.0.1");
  });

  test("an IPv4 client is seen as its IPv4 address, not the socket's ::ffff: form", () => {
    assert.deepEqual(peerOf("::ffff:10.0.0.7", 5353, "IPv6"), {
      address: "10.0.0.7",
      port: 5353,
      family: "IPv4",
    });
    assert.deepEqual(peerOf("fd00::7", 53, "IPv6"), { address: "fd00::7", port: 53, family: "IPv6" });
    assert.deepEqual(peerOf("::ffff:abcd", 53, "IPv6"), { address: "::ffff:abcd", port: 53, family: "IPv6" });
  });
});

describe("DnsServer stop", () => {
  test("a query in flight is still answered, then the port is closed", async () => {
    const server = new DnsServer({
      sites: [{ zone: "slow.", handler: slow }],
      address: "127.0.0.1",
      port: 0,
    });
    await server.start();
    const { port } = server.address;
    const received = nextQuery();
    const pending = udpExchange(port, encodeMessage(newQuery("x.slow.", 1, 5)), 1000);
    await received;
    await server.stop(1000);
    const reply = await pending;
    assert.ok(reply, "in-flight query answered");
    assert.equal(decodeOrFail(reply).id, 5);
    await assert.rejects(
      new Promise((resolve, reject) => {
        const c = net.connect(port, "127.0.0.1");
        c.on("connect", () => resolve(c));
        c.on("error", reject);
      }),
    );
  });
});

describe("literalFamily", () => {
  test("agrees with net.isIP on peers' addresses, names and near misses", () => {
    const addresses = [
      "127.0.0.1",
      "10.96.0.10",
      "::ffff:10.1.2.3",
      "::1",
      "fd00::a:b",
      "1.2.3",
      "1.2.3.4.5",
      "1..2.3",
      "01.2.3.4",
      "0.0.0.0",
      "255.255.255.255",
      "256.1.1.1",
      "1.2.3.",
      "1234",
      "kube-dns.kube-system",
      "localhost",
      "",
    ];
    for (const address of addresses) assert.equal(literalFamily(address), net.isIP(address), address);
  });
});
