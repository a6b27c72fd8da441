import { request } from "node:http";
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
 * One probe attempt: httpGet and tcpSocket against the pod's IP, from the root namespace (which routes to every
 * pod CIDR); exec inside the container whose process is `pid`, passing on exit code 0 within the timeout.
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
  return Promise.resolve("unsupported");
}

/**
 * A readiness probe's verdict over time: ready after successThreshold successes in a row, unready after
 * failureThreshold failures. Unsupported probes (grpc) count as passing, and the agent logs that.
 */
export class Readiness {
  ready = false;
  private successes = 0;
  private failures = 0;

  constructor(private readonly probe: Probe) {}

  record(result: ProbeResult): boolean {
    const before = this.ready;
    if (result === "failure") {
      this.successes = 0;
      if (++this.failures >= (this.probe.failureThreshold ?? 3)) this.ready = false;
    } else {
      this.failures = 0;
      if (++this.successes >= (this.probe.successThreshold ?? 1)) this.ready = true;
    }
    return before !== this.ready;
  }
}
