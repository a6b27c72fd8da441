/**
 * The SPDY connection against a hand-driven peer that does what moby/spdystream does not: grant flow-control
 * windows. It checks that a stream's output stops at its window until the peer reopens it, and that PING is
 * answered. (streams.test.ts covers the real client-go client.)
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { initialWindowSize } from "../../src/agent/kubelet-api/spdy/flow-control.js";
import { FrameReader } from "../../src/agent/kubelet-api/spdy/frame-reader.js";
import {
  decodeFrame,
  encodeFrame,
  flagFin,
  type SpdyFrame,
} from "../../src/agent/kubelet-api/spdy/frames.js";
import { spdyHeaders } from "../../src/agent/kubelet-api/spdy/header-block.js";
import { HeaderCompressor } from "../../src/agent/kubelet-api/spdy/header-compression.js";
import { handleExec } from "../../src/agent/kubelet-api/streams.js";

const outputBytes = 200_000;

/** A peer that records every frame the server sends. */
class RecordingPeer {
  readonly frames: SpdyFrame[] = [];
  private readonly reader = new FrameReader();
  private readonly compressor = new HeaderCompressor();

  constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      for (const bytes of this.reader.push(chunk)) {
        const frame = decodeFrame(bytes);
        if (frame) this.frames.push(frame);
      }
    });
  }

  send(frame: SpdyFrame): void {
    this.socket.write(encodeFrame(frame));
  }

  async openStream(streamId: number, headers: Record<string, string>): Promise<void> {
    const headerBlock = await this.compressor.compress(spdyHeaders(headers));
    this.send({ type: "synStream", streamId, associatedStreamId: 0, priority: 0, flags: 0, headerBlock });
  }

  dataOn(streamId: number): Buffer {
    const data = this.frames.flatMap((f) => (f.type === "data" && f.streamId === streamId ? [f.data] : []));
    return Buffer.concat(data);
  }

  finished(streamId: number): boolean {
    return this.frames.some((f) => f.type === "data" && f.streamId === streamId && (f.flags & flagFin) !== 0);
  }

  async until(condition: () => boolean, what: string): Promise<void> {
    for (const deadline = Date.now() + 5000; !condition(); await sleep(10)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    }
  }

  close(): void {
    this.compressor.close();
    this.socket.destroy();
  }
}

describe("SPDY sessions against a hand-driven peer", () => {
  let server: Server;
  let port = 0;
  const serverErrors: string[] = [];
  before(async () => {
    server = createServer();
    server.on("upgrade", (req, socket, head) => {
      void handleExec(
        req,
        socket,
        head,
        async (_command, io) => {
          io.stdout?.write(Buffer.alloc(outputBytes, "z"));
          return 0;
        },
        { streamCreationTimeoutMs: 300, onError: (err) => serverErrors.push(err.message) },
      );
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  async function upgrade(): Promise<RecordingPeer> {
    const req = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/exec/ns/pod/c?command=big&output=1",
      headers: {
        Connection: "Upgrade",
        Upgrade: "SPDY/3.1",
        "X-Stream-Protocol-Version": "v4.channel.k8s.io",
      },
    });
    req.end();
    const [, socket] = (await once(req, "upgrade")) as [unknown, Socket];
    return new RecordingPeer(socket);
  }

  it("answers PING, holds output to the stream window, and sends the rest once it is reopened", async () => {
    const peer = await upgrade();
    peer.send({ type: "ping", id: 1 });
    await peer.until(() => peer.frames.some((f) => f.type === "ping" && f.id === 1), "the PING answer");

    // A large connection window, so the stream's own 64 KiB window is what limits the output.
    peer.send({ type: "windowUpdate", streamId: 0, delta: 1 << 20 });
    await peer.openStream(1, { streamType: "error" });
    await peer.openStream(3, { streamType: "stdout" });
    await peer.until(() => peer.dataOn(3).length === initialWindowSize, "a full window of output");
    await sleep(400); // longer than the grace for peers that never grant windows
    assert.equal(peer.dataOn(3).length, initialWindowSize);
    assert.equal(peer.frames.filter((f) => f.type === "synReply").length, 2);

    peer.send({ type: "windowUpdate", streamId: 3, delta: 1 << 20 });
    await peer.until(() => peer.finished(3) && peer.finished(1), "the end of stdout and the status");
    assert.equal(peer.dataOn(3).toString(), "z".repeat(outputBytes));
    assert.deepEqual(JSON.parse(peer.dataOn(1).toString()), { status: "Success" });
    await peer.until(() => peer.frames.some((f) => f.type === "goAway"), "GOAWAY");
    peer.close();
  });

  it("gives up on a client that does not open all its streams in time", async () => {
    const peer = await upgrade();
    await peer.openStream(1, { streamType: "error" });
    await once(peer.socket, "close");
    assert.ok(peer.frames.some((f) => f.type === "goAway"));
    assert.ok(!peer.frames.some((f) => f.type === "data"), "no command ran");
    assert.ok(serverErrors.includes("timed out waiting for client to create streams"));
    peer.close();
  });
});
