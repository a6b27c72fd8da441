import { request } from "node:http";
import { connect as connectHttp2 } from "node:http2";
import { connect } from "node:net";
import type { Container, Probe } from "kubernetes-types/core/v1.js";
import { execInContainerFor } from "./exec-hook.js";

export type ProbeResult = "success" | "failure" | "unsupported";

/** A probe's port may be a container port's name. */
export function probePort(port: number | string | undefined, container: Container): number | undefined {
  if (typeof port === "number") return port;
  if (port === undefined) return undefined;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/**
 * One probe attempt: httpGet, tcpSocket and grpc against the pod's IP, from the root namespace (which routes to
 * every pod CIDR); exec inside the container whose process is `pid`, passing on exit code 0 within the timeout.
 */
export async function probeOnce(
  probe: Probe,
  ip: string,
  container: Container,
  pid?: number,
): Promise<ProbeResult> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.exec) {
    if (pid === undefined) return "failure";
    return (await execInContainerFor(pid, probe.exec.command ?? [], timeoutMs)) === 0 ? "success" : "failure";
  }
  if (probe.httpGet) {
    const port = probePort(probe.httpGet.port, container);
    if (port === undefined) return Promise.resolve("failure");
    return new Promise((resolve) => {
      const req = request(
        { host: ip, port, path: probe.httpGet?.path ?? "/", method: "GET", timeout: timeoutMs },
        (res) => {
          res.resume();
          const code = res.statusCode ?? 0;
          resolve(code >= 200 && code < 400 ? "success" : "failure");
        },
      );
      req.on("timeout", () => req.destroy());
      req.on("error", () => resolve("failure"));
      req.end();
    });
  }
  if (probe.tcpSocket) {
    const port = probePort(probe.tcpSocket.port, container);
    if (port === undefined) return Promise.resolve("failure");
    return new Promise((resolve) => {
      const socket = connect({ host: ip, port, timeout: timeoutMs });
      socket.on("connect", () => {
        socket.destroy();
        resolve("success");
      });
      socket.on("timeout", () => {
        socket.destroy();
        resolve("failure");
      });
      socket.on("error", () => resolve("failure"));
    });
  }
  if (probe.grpc) return grpcProbe(ip, probe.grpc.port, probe.grpc.service ?? "", timeoutMs);
  return Promise.resolve("unsupported");
}

/** A protobuf varint. */
function varint(n: number): Buffer {
  const bytes: number[] = [];
  let v = n;
  while (v >= 0x80) {
    bytes.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

/** grpc.health.v1.HealthCheckRequest{service}, as one length-prefixed gRPC message. */
function healthCheckRequest(service: string): Buffer {
  const name = Buffer.from(service);
  const message =
    name.length > 0 ? Buffer.concat([Buffer.from([0x0a]), varint(name.length), name]) : Buffer.alloc(0);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** The status field (1) of a grpc.health.v1.HealthCheckResponse message; 0 (UNKNOWN) when absent. */
function servingStatus(reply: Buffer): number {
  const message = reply.subarray(5, 5 + (reply.length >= 5 ? reply.readUInt32BE(1) : 0));
  for (let i = 0; i < message.length; ) {
    const tag = message[i++] ?? 0;
    let value = 0;
    let shift = 0;
    for (;;) {
      const b = message[i++] ?? 0;
      value |= (b & 0x7f) << shift;
      shift += 7;
      if (b < 0x80 || i >= message.length) break;
    }
    if (tag === 0x08) return value;
    if ((tag & 7) === 2) i += value;
  }
  return 0;
}

/**
 * The gRPC health protocol's Check over plain-text HTTP/2, as the kubelet's gRPC prober calls it: passing only for
 * a reply with status SERVING (1) and grpc-status 0; a refusal, another status, an error or the timeout fail.
 */
function grpcProbe(ip: string, port: number, service: string, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const session = connectHttp2(`http://${ip.includes(":") ? `[${ip}]` : ip}:${port}`);
    let settled = false;
    const end = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => end("failure"), timeoutMs);
    session.on("error", () => end("failure"));
    const call = session.request({
      ":method": "POST",
      ":path": "/grpc.health.v1.Health/Check",
      "content-type": "application/grpc",
      te: "trailers",
    });
    const chunks: Buffer[] = [];
    let grpcStatus: unknown;
    call.on("response", (headers) => (grpcStatus = headers["grpc-status"]));
    call.on("trailers", (trailers) => (grpcStatus = trailers["grpc-status"]));
    call.on("data", (chunk: Buffer) => chunks.push(chunk));
    call.on("error", () => end("failure"));
    call.on("end", () => {
      const serving = grpcStatus === "0" && servingStatus(Buffer.concat(chunks)) === 1;
      end(serving ? "success" : "failure");
    });
    call.end(healthCheckRequest(service));
  });
}
