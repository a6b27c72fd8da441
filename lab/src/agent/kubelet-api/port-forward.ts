/**
 * The kubelet's port forwarding over SPDY (portforward.k8s.io): for every forwarded connection the client opens
 * an error stream and a data stream sharing a requestID and naming the port; once both are there the data
 * stream is joined to a connection to that port, and failures are written as text on the error stream.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { StreamingOptions } from "./remote-command.js";
import { defaultStreamCreationTimeoutMs } from "./remote-command.js";
import { headerValue, type SpdyHeaders } from "./spdy/header-block.js";
import type { SpdyStream } from "./spdy/stream.js";
import { upgradeToSpdy } from "./upgrade.js";

export const portForwardProtocols = ["portforward.k8s.io"] as const;

/** Opens a connection to a port of the pod; rejects (with a message for the client) when it cannot. */
export type PortConnector = (port: number) => Promise<Duplex>;

/** Why a stream's headers are unusable, or undefined; such a stream is refused, as the kubelet does. */
function streamHeadersProblem(headers: SpdyHeaders): string | undefined {
  const port = headerValue(headers, "port");
  if (!port) return `"port" header is required`;
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535)
    return `unable to parse "${port}" as a port`;
  const type = headerValue(headers, "streamType");
  if (type !== "data" && type !== "error") return `invalid stream type "${type ?? ""}"`;
  return undefined;
}

interface StreamPair {
  data?: SpdyStream;
  error?: SpdyStream;
  timer?: NodeJS.Timeout;
}

/** A stream without requestID is paired by id, as old clients open error then data: ids n and n+2. */
function requestIdOf(stream: SpdyStream): string {
  const id = stream.header("requestID");
  if (id) return id;
  return String(stream.header("streamType") === "error" ? stream.id : stream.id - 2);
}

export async function servePortForward(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  connect: PortConnector,
  options: StreamingOptions = {},
): Promise<void> {
  const pairs = new Map<string, StreamPair>();
  const timeoutMs = options.streamCreationTimeoutMs ?? defaultStreamCreationTimeoutMs;
  const onStream = (stream: SpdyStream) => {
    const requestId = requestIdOf(stream);
    let pair = pairs.get(requestId);
    if (!pair) {
      const created: StreamPair = {};
      created.timer = setTimeout(() => {
        pairs.delete(requestId);
        failPair(created, `timed out waiting for streams of request ${requestId}`, options);
      }, timeoutMs);
      pair = created;
      pairs.set(requestId, pair);
    }
    const type = stream.header("streamType") === "data" ? "data" : "error";
    if (pair[type]) {
      const message = `error processing stream for request ${requestId}: ${type} stream already assigned`;
      options.onError?.(new Error(message));
      pair.error?.write(message);
      stream.destroy();
      return;
    }
    pair[type] = stream;
    const { data, error } = pair;
    if (data && error) {
      clearTimeout(pair.timer);
      pairs.delete(requestId);
      void forward(data, error, connect, options);
    }
  };
  const upgraded = upgradeToSpdy(req, socket, head, portForwardProtocols, {
    acceptStream: streamHeadersProblem,
    onStream,
  });
  if (!upgraded) return;
  await upgraded.connection.closed;
  for (const pair of pairs.values()) clearTimeout(pair.timer);
}

function failPair(pair: StreamPair, message: string, options: StreamingOptions): void {
  options.onError?.(new Error(message));
  pair.error?.end(message);
  pair.data?.destroy();
}

/** Joins the data stream to the port until both directions have ended, then closes the error stream. */
async function forward(
  data: SpdyStream,
  error: SpdyStream,
  connect: PortConnector,
  options: StreamingOptions,
) {
  const port = Number(data.header("port"));
  let target: Duplex;
  try {
    target = await connect(port);
  } catch (err) {
    const message = `error forwarding port ${port}: ${(err as Error).message}`;
    options.onError?.(new Error(message));
    error.end(message);
    data.destroy();
    return;
  }
  await new Promise<void>((resolve) => {
    let open = 2;
    const oneSideDone = () => {
      if (--open === 0) resolve();
    };
    target.on("error", (err) => {
      const message = `error forwarding port ${port}: ${err.message}`;
      options.onError?.(new Error(message));
      if (!error.writableEnded) error.write(message);
      data.destroy();
      resolve();
    });
    // Each direction passes on its FIN: the client's closes our side of the port's socket, and the other way round.
    data.pipe(target).on("finish", oneSideDone);
    target.pipe(data).on("finish", oneSideDone);
    data.on("close", () => {
      target.destroy();
      resolve();
    });
  });
  error.end();
  target.destroy();
}
