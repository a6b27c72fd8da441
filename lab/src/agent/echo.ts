/**
 * The lab's echo workload (image `switchyard/echo`): answers with the pod's name and the peer's address over
 * HTTP (port 8080, any path; /healthz too), TCP (9000: one line, then close) and UDP (9000: one datagram back).
 * Flags: --http-port N --tcp-port N --udp-port N --lameduck-ms N. On SIGTERM it keeps serving for the lameduck
 * time (0 by default), as a server draining behind a Service would, then closes its listeners and exits.
 */
import { createSocket } from "node:dgram";
import { createServer as createHttpServer } from "node:http";
import { createServer as createTcpServer } from "node:net";
import { hostname } from "node:os";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    "http-port": { type: "string", default: "8080" },
    "tcp-port": { type: "string", default: "9000" },
    "udp-port": { type: "string", default: "9000" },
    "lameduck-ms": { type: "string", default: "0" },
  },
  strict: false,
});
const name = process.env.POD_NAME || hostname();
const answer = (address: string | undefined, port: number | undefined) =>
  `${name} ${address ?? "?"}:${port ?? 0}\n`;

const http = createHttpServer((req, res) => {
  res.writeHead(200, { "content-type": "text/plain" });
  res.end(answer(req.socket.remoteAddress, req.socket.remotePort));
}).listen(Number(values["http-port"]));

const tcp = createTcpServer((socket) => {
  socket.end(answer(socket.remoteAddress, socket.remotePort));
  socket.on("error", () => {});
}).listen(Number(values["tcp-port"]));

/** Closes a socket that may be closed already (its bind failed). */
function closeQuietly(socket: ReturnType<typeof createSocket>): void {
  try {
    socket.close();
  } catch {}
}

// One socket per family, so an IPv4 peer reads as one (a dual-stack socket would name it ::ffff:a.b.c.d). A pod
// without IPv6 (an IPv4 lab) fails the second bind, which is fine.
const udp = (["udp4", "udp6"] as const).map((type) => {
  const socket = createSocket({ type, ipv6Only: true });
  socket.on("message", (_msg, peer) => socket.send(answer(peer.address, peer.port), peer.port, peer.address));
  socket.on("error", () => closeQuietly(socket));
  socket.bind(Number(values["udp-port"]));
  return socket;
});

process.on("SIGTERM", () => {
  setTimeout(() => {
    http.close();
    tcp.close();
    for (const socket of udp) closeQuietly(socket);
    process.exit(0);
  }, Number(values["lameduck-ms"]));
});
