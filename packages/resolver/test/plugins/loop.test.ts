import assert from "node:assert/strict";
import * as dgram from "node:dgram";
import * as net from "node:net";
import { test } from "node:test";
import { eventually } from "@switchyard/kube/testing";
import { freePort } from "@switchyard/testbed/controlplane";
import { Resolver } from "../../src/resolver.js";
import { FrameSplitter } from "../../src/server/frames.js";
import { decodeOrFail } from "../helpers/clients.js";

test("loop: a forward that points back at this server is detected with CoreDNS's message", async () => {
  const port = await freePort();
  const fatal: string[] = [];
  const resolver = Resolver.fromCorefile(`.:${port} {\n    forward . 127.0.0.1:${port}\n    loop\n}\n`, {
    env: {},
    deps: { fatal: (m) => fatal.push(m) },
    address: "127.0.0.1",
  });
  await resolver.start();
  try {
    await eventually("the loop to be detected", () => fatal.length > 0, { timeoutMs: 10_000 });
    assert.match(
      fatal[0] ?? "",
      /^Loop \(127\.0\.0\.1:\d+ -> .*:\d+\) detected for zone "\.", see https:\/\/coredns\.io\/plugins\/loop#troubleshooting\. Query: "HINFO \d+\.\d+\."$/,
    );
  } finally {
    await resolver.stop(100);
  }
});

test("loop: a forward that ends elsewhere stops probing without complaint", async () => {
  // The upstream answers NXDOMAIN to everything, over UDP and TCP, and counts the HINFO probes it sees.
  // (In-process queries, the probe among them, leave through forward over TCP.)
  let probes = 0;
  const nxdomain = (msg: Buffer) => {
    if (decodeOrFail(msg).question[0]?.type === 13) probes++;
    const reply = Buffer.from(msg);
    reply[2] = (msg[2] ?? 0) | 0x80;
    reply[3] = ((msg[3] ?? 0) & 0xf0) | 3;
    return reply;
  };
  const upstreamPort = await freePort();
  const upstream = dgram.createSocket("udp4");
  upstream.on("message", (msg, rinfo) => upstream.send(nxdomain(msg), rinfo.port, rinfo.address));
  await new Promise<void>((r) => upstream.bind(upstreamPort, "127.0.0.1", r));
  const upstreamTcp = net.createServer((socket) => {
    const frames = new FrameSplitter();
    socket.on("data", (chunk) => {
      for (const f of frames.push(chunk)) {
        const reply = nxdomain(f);
        const len = Buffer.alloc(2);
        len.writeUInt16BE(reply.length);
        socket.write(Buffer.concat([len, reply]));
      }
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>((r) => upstreamTcp.listen(upstreamPort, "127.0.0.1", r));
  const fatal: string[] = [];
  const port = await freePort();
  const resolver = Resolver.fromCorefile(
    `.:${port} {\n    forward . 127.0.0.1:${upstreamPort}\n    loop\n}\n`,
    { env: {}, deps: { fatal: (m) => fatal.push(m) }, address: "127.0.0.1" },
  );
  await resolver.start();
  try {
    await eventually("the probe to reach the upstream", () => probes > 0, { timeoutMs: 10_000 });
    assert.deepEqual(fatal, []);
    assert.equal(probes, 1, "an answer ends the probing");
  } finally {
    await resolver.stop(100);
    upstream.close();
    upstreamTcp.close();
  }
});

test("loop: an unreachable upstream is not a loop (SERVFAIL answers end the probing)", async () => {
  const deadPort = await freePort(); // nothing listens here
  const port = await freePort();
  const fatal: string[] = [];
  const resolver = Resolver.fromCorefile(`.:${port} {\n    forward . 127.0.0.1:${deadPort}\n    loop\n}\n`, {
    env: {},
    deps: { fatal: (m) => fatal.push(m) },
    address: "127.0.0.1",
  });
  await resolver.start();
  try {
    // Before the fix every SERVFAIL'd probe counted as a sighting and the third one stopped the server.
    await new Promise((r) => setTimeout(r, 5000));
    assert.deepEqual(fatal, []);
  } finally {
    await resolver.stop(100);
  }
});
