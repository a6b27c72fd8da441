import assert from "node:assert/strict";
import { createSocket, type Socket } from "node:dgram";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import {
  aQuery,
  firstNameserver,
  type LookupError,
  lookupOnce,
  replyError,
} from "../src/agent/dns-lookup.js";

/**
 * A loopback server that answers by the query's first label: ok, nx, empty, silence for "slow", and "late" as ok
 * but 300 ms later.
 */
function server(ports: number[]): Socket {
  const s = createSocket("udp4");
  s.on("message", (q, peer) => {
    ports.push(peer.port);
    const first = q.subarray(13, 13 + (q[12] ?? 0)).toString();
    if (first === "slow") return;
    const reply = Buffer.from(q);
    reply[2] = 0x81;
    reply[3] = first === "nx" ? 0x83 : 0x80;
    if (first === "ok" || first === "late") {
      reply.writeUInt16BE(1, 6);
      const rr = Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, 10, 0, 0, 1]);
      const send = () => s.send(Buffer.concat([reply, rr]), peer.port, peer.address);
      if (first === "late") setTimeout(send, 300);
      else send();
    } else s.send(reply, peer.port, peer.address);
  });
  return s;
}

describe("the load generator's per-lookup DNS client", () => {
  const ports: number[] = [];
  const s = server(ports);
  let port = 0;
  before(() => new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r())));
  before(() => {
    port = (s.address() as AddressInfo).port;
  });
  after(() => s.close());

  test("the first nameserver line is the one used", () => {
    assert.equal(
      firstNameserver("search a.svc\n# x\nnameserver 10.96.0.10\nnameserver 1.1.1.1\n"),
      "10.96.0.10",
    );
    assert.equal(firstNameserver("search a\n"), undefined);
  });

  test("the query is one A/IN question with RD, the name in labels", () => {
    const q = aQuery("kube-dns.kube-system.svc.cluster.local.", 0x1234);
    assert.equal(q.readUInt16BE(0), 0x1234);
    assert.equal(q.readUInt16BE(2), 0x0100);
    assert.equal(q.readUInt16BE(4), 1);
    assert.equal(q.subarray(12, 21).toString("latin1"), "\x08kube-dns");
    assert.deepEqual([...q.subarray(-5)], [0, 0, 1, 0, 1]);
  });

  test("replies: a record answers; rcodes and empty answers name their error; others' replies are ignored", () => {
    const q = aQuery("x.", 7);
    const r = Buffer.from(q);
    r[2] = 0x81;
    assert.equal(replyError(r, 8), "not ours");
    assert.equal(replyError(q, 7), "not ours", "a query is not a reply");
    assert.equal(replyError(r, 7), "ENODATA");
    r[3] = 0x83;
    assert.equal(replyError(r, 7), "ENOTFOUND");
    r[3] = 0x82;
    assert.equal(replyError(r, 7), "ESERVFAIL");
    r[3] = 0x80;
    r.writeUInt16BE(1, 6);
    assert.equal(replyError(r, 7), undefined);
  });

  test("against a real socket: answered, NXDOMAIN, timeout, and a new source port per lookup", async () => {
    ports.length = 0;
    await lookupOnce("127.0.0.1", "ok.example.", 1000, port);
    await lookupOnce("127.0.0.1", "ok.example.", 1000, port);
    await assert.rejects(lookupOnce("127.0.0.1", "nx.example.", 1000, port), { code: "ENOTFOUND" });
    await assert.rejects(lookupOnce("127.0.0.1", "empty.example.", 1000, port), { code: "ENODATA" });
    await assert.rejects(lookupOnce("127.0.0.1", "slow.example.", 200, port), { code: "ETIMEOUT" });
    assert.equal(new Set(ports).size, ports.length, `one source port per lookup: ${ports.join(" ")}`);
  });

  test("a timed-out lookup reports when its timer fired, and an answer that comes later within the window", async () => {
    const late: number[] = [];
    const watch = { windowMs: 1000, onLate: (ms: number) => late.push(ms) };
    const err = await lookupOnce("127.0.0.1", "late.example.", 100, port, watch).then(
      () => assert.fail("answered within 100 ms"),
      (e: LookupError) => e,
    );
    assert.equal(err.code, "ETIMEOUT");
    // libuv arms timers against its loop time, cached to the millisecond: one may fire up to 1 ms short.
    assert.ok((err.timerMs ?? 0) >= 99, `the timer fired at ${err.timerMs} ms`);
    await eventually("the late answer", () => late.length === 1);
    assert.ok((late[0] ?? 0) >= 300, `the answer came ${late[0]} ms after sending`);
    // Silence stays silence: nothing is reported for a lookup never answered.
    const none: number[] = [];
    await assert.rejects(
      lookupOnce("127.0.0.1", "slow.example.", 50, port, { windowMs: 200, onLate: (ms) => none.push(ms) }),
      { code: "ETIMEOUT" },
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(none, []);
  });

  test("a port where nothing listens is ECONNREFUSED, not a timeout", async () => {
    const closed = createSocket("udp4");
    await new Promise<void>((r) => closed.bind(0, "127.0.0.1", () => r()));
    const free = (closed.address() as AddressInfo).port;
    closed.close();
    await assert.rejects(lookupOnce("127.0.0.1", "ok.example.", 2000, free), { code: "ECONNREFUSED" });
  });
});
