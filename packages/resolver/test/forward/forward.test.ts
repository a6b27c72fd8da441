import assert from "node:assert/strict";
import * as dgram from "node:dgram";
import * as net from "node:net";
import { after, before, describe, test } from "node:test";
import { Metrics } from "../../src/metrics/metrics.js";
import { Resolver } from "../../src/resolver.js";
import { DnsServer } from "../../src/server/dns-server.js";
import { decodeMessage } from "../../src/wire/decode.js";
import { encodeMessage } from "../../src/wire/encode.js";
import { replyTo } from "../../src/wire/message.js";
import { parseRecord } from "../../src/wire/presentation.js";
import { dig } from "../helpers/clients.js";
import { staticZone } from "../helpers/static-zone.js";

/** A UDP upstream that first sends a reply under a wrong ID, then the right one. */
async function sneakyUpstream(): Promise<{ port: number; close(): void }> {
  const sock = dgram.createSocket("udp4");
  sock.on("message", (packet, rinfo) => {
    const d = decodeMessage(packet);
    if (d.kind !== "message") return;
    const good = { ...replyTo(d.message), answer: [parseRecord("sneaky.test. 60 IN A 192.0.2.99")] };
    const bad = {
      ...good,
      id: (d.message.id + 1) & 0xffff,
      answer: [parseRecord("sneaky.test. 60 IN A 6.6.6.6")],
    };
    sock.send(encodeMessage(bad), rinfo.port, rinfo.address);
    setTimeout(() => sock.send(encodeMessage(good), rinfo.port, rinfo.address), 20);
  });
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", () => r()));
  return { port: sock.address().port, close: () => sock.close() };
}

/** A TCP port with nothing behind it. */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A UDP port with nothing behind it: a datagram to it comes back as ICMP port unreachable. */
async function deadUdpPort(): Promise<number> {
  const s = dgram.createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("forward to a loopback upstream", () => {
  const big = ["big.test.", "big.pu.test."].flatMap((n) =>
    Array.from({ length: 40 }, (_, i) => `${n} 60 IN A 10.1.0.${i + 1}`),
  );
  const zone = staticZone(["www.test. 60 IN A 192.0.2.10", ...big]);
  const upstream = new DnsServer({ sites: [{ zone: ".", handler: zone }], address: "127.0.0.1", port: 0 });
  let sneaky: { port: number; close(): void };
  let dead = 0;
  let deadUdp = 0;
  const metrics = new Metrics();
  /** The metrics text once it matches (health checks run in the background), or after 5 s as it is then. */
  const metricsOnceMatching = async (pattern: RegExp): Promise<string> => {
    let text = await metrics.text();
    for (let i = 0; i < 100 && !pattern.test(text); i++) {
      await new Promise((r) => setTimeout(r, 50));
      text = await metrics.text();
    }
    return text;
  };
  let resolver: Resolver;
  let port = 0;

  before(async () => {
    await upstream.start();
    sneaky = await sneakyUpstream();
    dead = await deadPort();
    deadUdp = await deadUdpPort();
    const up = upstream.address.port;
    resolver = Resolver.fromCorefile(
      `.:53 {
        forward . 127.0.0.1:${up}
      }
      sneaky.test:53 {
        forward . 127.0.0.1:${sneaky.port}
      }
      dead.test:53 {
        forward . 127.0.0.1:${dead} {
          force_tcp
          max_fails 1
          health_check 50ms
        }
      }
      fo.test:53 {
        forward . 127.0.0.1:${deadUdp} 127.0.0.1:${up} {
          policy sequential
        }
      }
      pu.test:53 {
        forward . 127.0.0.1:${up} {
          prefer_udp
        }
      }`,
      { env: {}, deps: { metrics }, address: "127.0.0.1", portOverride: 0 },
    );
    await resolver.start();
    port = resolver.servers[0]?.address.port ?? 0;
  });
  after(async () => {
    await resolver.stop(100);
    await upstream.stop(100);
    sneaky.close();
  });

  test("a name the upstream knows", async () => {
    const out = await dig(port, "www.test", "A", "+noall", "+answer");
    assert.match(out, /^www\.test\.\s+60\s+IN\s+A\s+192\.0\.2\.10$/m);
  });

  test("NXDOMAIN is relayed", async () => {
    const out = await dig(port, "nope.test", "A");
    assert.match(out, /status: NXDOMAIN/);
  });

  test("upstream queries use a fresh ID, not the client's", async () => {
    zone.seen.length = 0;
    await dig(port, "www.test", "A", "+short");
    const seen = zone.seen.at(-1);
    assert.ok(seen);
    const out = await dig(port, "www.test", "A", "+short");
    assert.equal(out.trim(), "192.0.2.10");
    assert.notEqual(zone.seen.at(-1)?.id, seen.id, "two queries, two random IDs (1 in 65536 to collide)");
  });

  test("a truncated UDP answer reaches dig, which retries over TCP through forward", async () => {
    // Without EDNS the upstream must truncate at 512 bytes; forward relays TC and dig switches to TCP.
    const udpOnly = await dig(port, "big.test", "A", "+noedns", "+ignore", "+noall", "+comments");
    assert.match(udpOnly, /flags:[^;]*\btc\b/);
    const out = await dig(port, "big.test", "A", "+noedns", "+short");
    assert.equal(out.trim().split("\n").length, 40);
  });

  test("prefer_udp retries over TCP itself when the UDP answer is truncated", async () => {
    const out = await dig(port, "big.pu.test", "A", "+tcp", "+noedns", "+short");
    assert.equal(out.trim().split("\n").length, 40);
  });

  test("a reply under the wrong ID is ignored and the right one used", async () => {
    const out = await dig(port, "sneaky.test", "A", "+short");
    assert.equal(out.trim(), "192.0.2.99");
  });

  test("over UDP, a refused first upstream fails over to the next at once, and its health check starts", async () => {
    const started = Date.now();
    const out = await dig(port, "www.fo.test", "A");
    // the live upstream's static zone knows no such name: its NXDOMAIN is the answer relayed
    assert.match(out, /status: NXDOMAIN/);
    assert.ok(Date.now() - started < 2000, "the refused exchange is not waited out");
    const failing = new RegExp(
      `healthcheck_failures_total\\{proxy_name="forward",to="127\\.0\\.0\\.1:${deadUdp}"\\} [1-9]`,
    );
    const text = await metricsOnceMatching(failing);
    assert.match(text, failing);
    const answered = new RegExp(
      `coredns_proxy_request_duration_seconds_count\\{proxy_name="forward",to="127\\.0\\.0\\.1:${upstream.address.port}",rcode="NXDOMAIN"\\} [1-9]`,
    );
    assert.match(text, answered);
  });

  test("a dead upstream gives SERVFAIL quickly, and health checks count failures", async () => {
    const started = Date.now();
    const out = await dig(port, "x.dead.test", "A");
    assert.match(out, /status: SERVFAIL/);
    assert.ok(Date.now() - started < 2000, "connection refused is not a timeout");
    const text = await metricsOnceMatching(/healthcheck_failures_total\{[^}]*\} [2-9]/);
    assert.match(
      text,
      /coredns_proxy_healthcheck_failures_total\{proxy_name="forward",to="127\.0\.0\.1:\d+"\} [2-9]/,
    );
    // Down now: the next query fails over to a random pick and counts as a broken health check.
    await dig(port, "y.dead.test", "A");
    assert.match(await metrics.text(), /coredns_forward_healthcheck_broken_total [1-9]/);
  });
});
