/**
 * The HTTP half of a kubelet streaming request: choosing a stream protocol from the client's
 * X-Stream-Protocol-Version list and switching the socket to SPDY/3.1 (101), or answering 400/403 and closing,
 * as k8s.io/streaming's httpstream.Handshake and the SPDY response upgrader do.
 */
import { type IncomingMessage, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { SpdyConnection, type SpdyConnectionOptions } from "./spdy/connection.js";

export const protocolVersionHeader = "X-Stream-Protocol-Version";
export const acceptedProtocolVersionsHeader = "X-Accepted-Stream-Protocol-Versions";

/** Either the protocol to speak, or the HTTP error to answer with. */
export type Negotiation =
  | { ok: true; protocol: string }
  | { ok: false; status: 400 | 403; message: string; headers?: Record<string, string[]> };

/** The first protocol of the client's (in its order) that the server speaks, as the kubelet picks. */
export function negotiateProtocol(req: IncomingMessage, serverProtocols: readonly string[]): Negotiation {
  const raw = req.headersDistinct[protocolVersionHeader.toLowerCase()];
  if (!raw || raw.length === 0) {
    return {
      ok: false,
      status: 400,
      message: `unable to upgrade: header ${protocolVersionHeader} is missing`,
    };
  }
  const clientProtocols = raw.flatMap((value) => value.split(",").map((p) => p.trim())).filter(Boolean);
  if (clientProtocols.length === 0) {
    return {
      ok: false,
      status: 400,
      message: `unable to upgrade: header ${protocolVersionHeader} names no protocol`,
    };
  }
  const protocol = clientProtocols.find((p) => serverProtocols.includes(p));
  if (!protocol) {
    return {
      ok: false,
      status: 403,
      message: `unable to upgrade: unable to negotiate protocol: client supports [${clientProtocols.join(" ")}], server accepts [${serverProtocols.join(" ")}]`,
      headers: { [acceptedProtocolVersionsHeader]: [...serverProtocols] },
    };
  }
  return { ok: true, protocol };
}

/** Why the request is not a SPDY/3.1 upgrade, or undefined when it is one. */
export function spdyUpgradeProblem(req: IncomingMessage): string | undefined {
  const connection = (req.headers.connection ?? "").toLowerCase();
  const upgrade = (req.headers.upgrade ?? "").toLowerCase();
  if (connection.includes("upgrade") && upgrade.includes("spdy/3.1")) return undefined;
  return `unable to upgrade: missing upgrade headers in request (Connection: ${connection || "-"}, Upgrade: ${upgrade || "-"})`;
}

/** Answers a request that will not be upgraded with a plain-text HTTP error, then closes the socket. */
export function rejectUpgrade(
  socket: Duplex,
  status: number,
  message: string,
  headers: Record<string, string[]> = {},
): void {
  const body = `${message}\n`;
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}`,
    "Content-Type: text/plain; charset=utf-8",
    "X-Content-Type-Options: nosniff",
    ...Object.entries(headers).flatMap(([name, values]) => values.map((value) => `${name}: ${value}`)),
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
  ];
  socket.on("error", () => {});
  socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
}

/**
 * Negotiates, then switches the socket to SPDY/3.1 and returns the connection; on failure answers the client,
 * closes the socket and returns undefined.
 */
export function upgradeToSpdy(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  serverProtocols: readonly string[],
  options: SpdyConnectionOptions,
): { protocol: string; connection: SpdyConnection } | undefined {
  const negotiation = negotiateProtocol(req, serverProtocols);
  if (!negotiation.ok) {
    rejectUpgrade(socket, negotiation.status, negotiation.message, negotiation.headers);
    return undefined;
  }
  const problem = spdyUpgradeProblem(req);
  if (problem) {
    rejectUpgrade(socket, 400, problem);
    return undefined;
  }
  socket.write(
    [
      "HTTP/1.1 101 Switching Protocols",
      "Connection: Upgrade",
      "Upgrade: SPDY/3.1",
      `${protocolVersionHeader}: ${negotiation.protocol}`,
      "",
      "",
    ].join("\r\n"),
  );
  return { protocol: negotiation.protocol, connection: new SpdyConnection(socket, head, options) };
}
