/**
 * The kubelet's exec and attach over SPDY (k8s.io/cri-streaming remotecommand): the client opens one stream per
 * channel it asked for (error always; stdin, stdout, stderr per the query; resize with a tty), the command runs
 * with them, and its outcome goes back on the error stream before everything is closed.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex, Readable, Writable } from "node:stream";
import { finished } from "node:stream/promises";
import { encodeStatus, internalErrorStatus, type StreamStatus } from "./exec-status.js";
import { resizeEvents, type TerminalSize } from "./resize.js";
import type { SpdyConnection } from "./spdy/connection.js";
import type { SpdyStream } from "./spdy/stream.js";
import { rejectUpgrade, upgradeToSpdy } from "./upgrade.js";

/**
 * The kubelet's SPDY protocols, best first. v5.channel.k8s.io exists only over WebSocket (its addition is a
 * close signal SPDY does not need), so client-go's SPDY executor offers v5 first and settles on v4. v1, with its
 * known bugs (issues 13394, 13395), is left out: every client since 2015 speaks v2 or later.
 */
export const remoteCommandProtocols = [
  "v4.channel.k8s.io",
  "v3.channel.k8s.io",
  "v2.channel.k8s.io",
] as const;

/** The kubelet waits this long for the client to open all its streams. */
export const defaultStreamCreationTimeoutMs = 30_000;

/** The channels of one exec or attach, as the runner sees them; undefined for a channel the client did not ask for. */
export interface StreamIO {
  stdin: Readable | undefined;
  stdout: Writable | undefined;
  /** Always undefined with a tty: a terminal merges stderr into stdout. */
  stderr: Writable | undefined;
  tty: boolean;
  /** Calls back with each terminal size the client sends, starting with the latest one already received. */
  onResize(listener: (size: TerminalSize) => void): void;
  /** Aborted when the client goes away before the command is over, so the runner can stop it. */
  signal: AbortSignal;
}

export interface StreamingOptions {
  streamCreationTimeoutMs?: number;
  /** Hears about failures the client is told about, or cannot be told (e.g. a stream timeout); for logging. */
  onError?: (err: Error) => void;
}

export interface RemoteCommandRequest {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
  command: string[];
}

const truthy = (value: string | null) => value === "1" || value === "true";

/**
 * Reads the kubelet's query (input, output, error, tty as "1", command repeated), also taking the API server's
 * names (stdin, stdout, stderr, "true") so a URL copied from a pod's exec subresource works too.
 */
export function parseRemoteCommandRequest(url: string): RemoteCommandRequest | string {
  const query = new URL(url, "http://kubelet").searchParams;
  const flag = (kubelet: string, api: string) => truthy(query.get(kubelet)) || truthy(query.get(api));
  const tty = truthy(query.get("tty"));
  const request: RemoteCommandRequest = {
    stdin: flag("input", "stdin"),
    stdout: flag("output", "stdout"),
    // As the kubelet does: a terminal has no separate stderr, so asking for both silently drops stderr.
    stderr: flag("error", "stderr") && !tty,
    tty,
    command: query.getAll("command"),
  };
  if (!request.stdin && !request.stdout && !request.stderr)
    return "you must specify at least 1 of stdin, stdout, stderr";
  return request;
}

interface Channels {
  error?: SpdyStream;
  stdin?: SpdyStream;
  stdout?: SpdyStream;
  stderr?: SpdyStream;
  resize?: SpdyStream;
}

const channelNames = new Set(["error", "stdin", "stdout", "stderr", "resize"]);

/** Gathers the client's streams by type until as many as the request implies have arrived. */
class ChannelCollector {
  readonly channels: Channels = {};
  readonly ready: Promise<void>;
  private arrived = 0;
  // Known only once the protocol is (v2 has no resize stream), which is after the first streams may arrive.
  private expected = Number.POSITIVE_INFINITY;
  private markReady: () => void = () => {};

  constructor(private readonly options: StreamingOptions) {
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
  }

  add(stream: SpdyStream): void {
    const type = stream.header("streamType") ?? "";
    // As the kubelet: a stream of an unknown type is kept open but not counted.
    if (!channelNames.has(type)) {
      this.options.onError?.(new Error(`unexpected stream type "${type}"`));
      return;
    }
    this.channels[type as keyof Channels] = stream;
    this.arrived++;
    this.check();
  }

  expect(count: number): void {
    this.expected = count;
    this.check();
  }

  private check(): void {
    if (this.arrived >= this.expected) this.markReady();
  }
}

/**
 * Upgrades, collects the client's streams, runs `run` and reports its status. Resolves when the session is
 * over; never rejects, since every failure is answered to the client (or, once it is gone, to onError).
 */
export async function serveRemoteCommand(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  run: (request: RemoteCommandRequest, io: StreamIO) => Promise<StreamStatus>,
  options: StreamingOptions = {},
): Promise<void> {
  const request = parseRemoteCommandRequest(req.url ?? "/");
  if (typeof request === "string") return rejectUpgrade(socket, 400, request);
  const collector = new ChannelCollector(options);
  const upgraded = upgradeToSpdy(req, socket, head, remoteCommandProtocols, {
    onStream: (stream) => collector.add(stream),
  });
  if (!upgraded) return;
  const { protocol, connection } = upgraded;
  const resizable = protocol !== "v2.channel.k8s.io";
  collector.expect(
    1 +
      Number(request.stdin) +
      Number(request.stdout) +
      Number(request.stderr) +
      Number(request.tty && resizable),
  );
  const timeoutMs = options.streamCreationTimeoutMs ?? defaultStreamCreationTimeoutMs;
  const outcome = await waitFor(collector.ready, connection, timeoutMs);
  if (outcome !== "ready") {
    options.onError?.(
      new Error(
        outcome === "timeout"
          ? "timed out waiting for client to create streams"
          : "client went away before creating its streams",
      ),
    );
    return connection.close();
  }
  await runAndReport(request, collector.channels, connection, protocol, run, options);
}

function waitFor(
  ready: Promise<void>,
  connection: SpdyConnection,
  timeoutMs: number,
): Promise<"ready" | "timeout" | "closed"> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  return Promise.race([
    ready.then(() => "ready" as const),
    timeout,
    connection.closed.then(() => "closed" as const),
  ]).finally(() => clearTimeout(timer));
}

async function runAndReport(
  request: RemoteCommandRequest,
  channels: Channels,
  connection: SpdyConnection,
  protocol: string,
  run: (request: RemoteCommandRequest, io: StreamIO) => Promise<StreamStatus>,
  options: StreamingOptions,
): Promise<void> {
  const aborter = new AbortController();
  void connection.closed.then(() => aborter.abort());
  const io: StreamIO = {
    stdin: channels.stdin,
    stdout: channels.stdout,
    stderr: channels.stderr,
    tty: request.tty,
    onResize: resizeEvents(channels.resize),
    signal: aborter.signal,
  };
  let status: StreamStatus;
  try {
    status = await run(request, io);
  } catch (err) {
    options.onError?.(err as Error);
    status = internalErrorStatus((err as Error).message);
  }
  // stdout and stderr end before the status, so the client has all output when it learns the outcome.
  await Promise.all([endWritable(channels.stdout), endWritable(channels.stderr)]);
  channels.error?.write(encodeStatus(status, protocol));
  await endWritable(channels.error);
  connection.close();
  await connection.closed;
}

/** Ends a stream's sending side and waits until its FIN has been handed to the socket (or the stream died). */
async function endWritable(stream: SpdyStream | undefined): Promise<void> {
  if (!stream || stream.destroyed) return;
  if (!stream.writableEnded) stream.end();
  await finished(stream, { readable: false }).catch(() => {});
}
