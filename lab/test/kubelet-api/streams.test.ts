/**
 * The kubelet-api streaming handlers against client-go's own SPDY client (the stream-probe Go program), plus
 * raw-socket checks that bad upgrades and bad frames get clean errors.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { after, before, describe, it } from "node:test";
import { decodeFrame, encodeFrame } from "../../src/agent/kubelet-api/spdy/frames.js";
import {
  type ExecRunner,
  handleAttach,
  handleExec,
  handlePortForward,
  type StreamIO,
} from "../../src/agent/kubelet-api/streams.js";
import { buildStreamProbe } from "./stream-probe.js";

/** Runs the command as a child process, wired to the client's channels. */
const childRunner: ExecRunner = (command, io) =>
  new Promise((resolve, reject) => {
    const [file = "false", ...args] = command;
    const child = spawn(file, args, { stdio: "pipe" });
    child.on("error", reject);
    child.stdin.on("error", () => {}); // the command may exit without reading its input
    if (io.stdin) io.stdin.pipe(child.stdin);
    else child.stdin.end();
    if (io.stdout) child.stdout.pipe(io.stdout, { end: false });
    if (io.stderr) child.stderr.pipe(io.stderr, { end: false });
    io.signal.addEventListener("abort", () => child.kill());
    child.on("close", (code) => resolve(code ?? 128));
  });

/** An attach that reports the terminal size, then echoes stdin until it ends. */
async function echoAttach(io: StreamIO): Promise<void> {
  const resized = new Promise<void>((resolve) =>
    io.onResize((size) => {
      io.stdout?.write(`size ${size.width}x${size.height}\n`);
      resolve();
    }),
  );
  io.stdin?.on("data", (chunk: Buffer) => io.stdout?.write(chunk));
  await Promise.all([resized, io.stdin ? once(io.stdin, "end") : undefined]);
}

async function connectLocal(port: number): Promise<Duplex> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  return socket;
}

function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
}

interface ProbeResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

function runProbe(probe: string, args: string[], input = ""): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(probe, args, { stdio: "pipe" });
    const stdout: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(stdout), stderr }));
    child.stdin.end(input);
  });
}

describe("kubelet streaming over SPDY, driven by client-go", () => {
  let probe: string | undefined;
  let server: Server;
  let base = "";
  const serverErrors: Error[] = [];

  before(async () => {
    probe = await buildStreamProbe();
    server = createServer((_req, res) => res.writeHead(404).end());
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = new URL(req.url ?? "/", "http://kubelet").pathname;
      const options = { onError: (err: Error) => serverErrors.push(err), streamCreationTimeoutMs: 5000 };
      if (path.startsWith("/exec/")) void handleExec(req, socket, head, childRunner, options);
      else if (path.startsWith("/attach/")) void handleAttach(req, socket, head, echoAttach, options);
      else if (path.startsWith("/portForward/"))
        void handlePortForward(req, socket, head, connectLocal, options);
      else socket.destroy();
    });
    base = `http://127.0.0.1:${await listen(server)}`;
  });
  after(() => server.close());

  const execUrl = (command: string[], channels: string) => {
    const query = new URLSearchParams(command.map((part): [string, string] => ["command", part]));
    for (const channel of channels.split(",")) query.set(channel, "1");
    return `${base}/exec/default/pod/container?${query}`;
  };

  it("returns stdout and stderr, and exit code 0", async (t) => {
    if (!probe) return t.skip("no Go toolchain to build the client-go probe");
    const url = execUrl(["sh", "-c", "echo out; echo err >&2"], "output,error");
    const result = await runProbe(probe, ["exec", url]);
    assert.equal(result.stdout.toString(), "out\n");
    assert.equal(result.stderr, "err\n");
    assert.equal(result.code, 0);
  });

  it("delivers stdin to the command", async (t) => {
    if (!probe) return t.skip("no Go toolchain to build the client-go probe");
    const url = execUrl(["tr", "a-z", "A-Z"], "input,output,error");
    const result = await runProbe(probe, ["exec", url, "-stdin"], "hello stdin\n");
    assert.equal(result.stdout.toString(), "HELLO STDIN\n");
    assert.equal(result.code, 0, result.stderr);
  });

  it("reports a non-zero exit code as the client's exit code", async (t) => {
    if (!probe) return t.skip("no Go toolchain to build the client-go probe");
    const url = execUrl(["sh", "-c", "echo bye; exit 3"], "output,error");
    const result = await runProbe(probe, ["exec", url]);
    assert.equal(result.stdout.toString(), "bye\n");
    assert.equal(result.code, 3, result.stderr);
  });

  it("speaks v3, passing resize events on a tty", async (t) => {
    if (!probe) return t.skip("no Go toolchain to build the client-go probe");
    const url = `${base}/attach/default/pod/container?input=1&output=1&tty=1`;
    const args = ["exec", url, "-stdin", "-tty", "-size", "80x24", "-protocols", "v3.channel.k8s.io"];
    const result = await runProbe(probe, args, "v3 input\n");
    assert.equal(result.code, 0, result.stderr);
    // The resize and the typed line travel on two streams, so either may reach the runner first.
    assert.deepEqual(result.stdout.toString().split("\n").sort(), ["", "size 80x24", "v3 input"]);
  });

  it("speaks v2, where a non-zero exit comes back as an error message", async (t) => {
    if (!probe) return t.skip("no Go toolchain to build the client-go probe");
    const url = execUrl(["sh", "-c", "echo v2; exit 4"], "output,error");
    const result = await runProbe(probe, ["exec", url, "-protocols", "v2.channel.k8s.io"]);
    assert.equal(result.stdout.toString(), "v2\n");
    assert.equal(result.code, 100);
    assert.match(
      result.stderr,
      /command terminated with non-zero exit code: command 'sh -c echo v2; exit 4' exited with 4/,
    );
  });

  it("delivers a large output whole", async (t) => {
    if (!probe) return t.skip("no Go toolchain to build the client-go probe");
    const bytes = 6 * 1024 * 1024;
    const url = execUrl(["sh", "-c", `yes 0123456789abcdef | head -c ${bytes}`], "output");
    const result = await runProbe(probe, ["exec", url]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.length, bytes);
    assert.equal(result.stdout.toString().replaceAll("0123456789abcdef\n", "").length, bytes % 17);
  });

  it("attaches with a tty, passing terminal sizes and stdin", async (t) => {
    if (!probe) return t.skip("no Go toolchain to build the client-go probe");
    const url = `${base}/attach/default/pod/container?input=1&output=1&tty=1`;
    const result = await runProbe(probe, ["exec", url, "-stdin", "-tty", "-size", "100x40"], "typed\n");
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout.toString(), /size 100x40\n/);
    assert.match(result.stdout.toString(), /typed\n/);
  });

  it("forwards connections to a local TCP echo server", async (t) => {
    if (!probe) return t.skip("no Go toolchain to build the client-go probe");
    const echo = createTcpServer((socket) => socket.pipe(socket));
    const echoPort = await listen(echo);
    const forwarder = spawn(probe, ["portforward", `${base}/portForward/default/pod`, String(echoPort)]);
    t.after(() => {
      forwarder.kill();
      echo.close();
    });
    const [line] = (await once(forwarder.stdout, "data")) as [Buffer];
    const localPort = Number(/listening (\d+)/.exec(line.toString())?.[1]);
    for (const message of ["first connection\n", "second connection\n"]) {
      const reply = await roundTrip(localPort, message);
      assert.equal(reply, message);
    }
    forwarder.stdin.end();
    const [code] = await once(forwarder, "close");
    assert.equal(code, 0);
  });

  it("answers a port nothing listens on with an error, and keeps forwarding", async (t) => {
    if (!probe) return t.skip("no Go toolchain to build the client-go probe");
    const closed = createTcpServer();
    const closedPort = await listen(closed);
    closed.close();
    const forwarder = spawn(probe, ["portforward", `${base}/portForward/default/pod`, String(closedPort)]);
    t.after(() => forwarder.kill());
    let stderr = "";
    forwarder.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [line] = (await once(forwarder.stdout, "data")) as [Buffer];
    const localPort = Number(/listening (\d+)/.exec(line.toString())?.[1]);
    assert.equal(await roundTrip(localPort, "anyone?\n"), "");
    await waitUntil(() => stderr.includes("error forwarding port"));
    forwarder.stdin.end();
    await once(forwarder, "close");
  });
});

async function roundTrip(port: number, message: string): Promise<string> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  let reply = "";
  socket.on("data", (chunk: Buffer) => {
    reply += chunk.toString();
    if (reply.length >= message.length) socket.end();
  });
  socket.on("error", () => {});
  socket.write(message);
  await once(socket, "close");
  return reply;
}

async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("kubelet streaming: bad upgrades and bad frames", () => {
  let server: Server;
  let port = 0;
  before(async () => {
    server = createServer((_req, res) => res.writeHead(404).end());
    server.on("upgrade", (req, socket, head) => void handleExec(req, socket, head, async () => 0));
    port = await listen(server);
  });
  after(() => server.close());

  type Answer = { status: number; headers: IncomingMessage["headers"]; body: string } | { upgraded: Socket };

  function upgradeRequest(path: string, headers: Record<string, string>): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path, method: "POST", headers });
      req.on("error", reject);
      req.on("upgrade", (_res, socket: Socket) => resolve({ upgraded: socket }));
      req.on("response", async (res) => {
        let body = "";
        for await (const chunk of res) body += chunk;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
      req.end();
    });
  }

  const spdyHeaders = (protocol?: string): Record<string, string> => ({
    Connection: "Upgrade",
    Upgrade: "SPDY/3.1",
    ...(protocol ? { "X-Stream-Protocol-Version": protocol } : {}),
  });
  const execPath = "/exec/ns/pod/c?command=true&output=1";

  it("answers 400 when the client names no stream protocol", async () => {
    const answer = await upgradeRequest(execPath, spdyHeaders());
    assert.ok("status" in answer);
    assert.equal(answer.status, 400);
    assert.match(answer.body, /X-Stream-Protocol-Version/);
  });

  it("answers 403 with the accepted versions when no protocol matches", async () => {
    const answer = await upgradeRequest(execPath, spdyHeaders("v9.channel.k8s.io, channel.k8s.io"));
    assert.ok("status" in answer);
    assert.equal(answer.status, 403);
    assert.equal(
      answer.headers["x-accepted-stream-protocol-versions"],
      "v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io",
    );
  });

  it("answers 400 to an upgrade to something other than SPDY/3.1", async () => {
    const answer = await upgradeRequest(execPath, {
      Connection: "Upgrade",
      Upgrade: "h2c",
      "X-Stream-Protocol-Version": "v4.channel.k8s.io",
    });
    assert.ok("status" in answer);
    assert.equal(answer.status, 400);
  });

  it("answers 400 when the query asks for no channel", async () => {
    const answer = await upgradeRequest("/exec/ns/pod/c?command=true", spdyHeaders("v4.channel.k8s.io"));
    assert.ok("status" in answer);
    assert.equal(answer.status, 400);
    assert.match(answer.body, /at least 1 of stdin, stdout, stderr/);
  });

  it("answers garbage frames with GOAWAY(PROTOCOL_ERROR) and closes, then serves the next client", async () => {
    for (const garbage of [
      Buffer.from("8002000600000004deadbeef", "hex"),
      encodeFrame({
        type: "synStream",
        streamId: 1,
        associatedStreamId: 0,
        priority: 0,
        flags: 0,
        headerBlock: Buffer.from("not zlib at all"),
      }),
    ]) {
      const answer = await upgradeRequest(execPath, spdyHeaders("v4.channel.k8s.io"));
      assert.ok("upgraded" in answer);
      const received: Buffer[] = [];
      answer.upgraded.on("data", (chunk: Buffer) => received.push(chunk));
      answer.upgraded.write(garbage);
      await once(answer.upgraded, "close");
      const goAway = decodeFrame(Buffer.concat(received));
      assert.deepEqual(goAway, { type: "goAway", lastGoodStreamId: 0, status: 1 });
    }
  });
});
