import { createServer } from "node:net";
import type { ControlPlanePorts } from "./options.js";

/** Resolves when nothing listens on host:port; rejects with the reason otherwise (EADDRINUSE, EACCES...). */
export function checkPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/** A port the kernel says is free right now (there is a small race until the user binds it). */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host, port: 0 }, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Free loopback ports for every component of a control plane (tests and benchmarks run several side by side). */
export async function freeControlPlanePorts(): Promise<ControlPlanePorts> {
  return {
    apiserver: await freePort(),
    etcdClient: await freePort(),
    etcdPeer: await freePort(),
    controllerManager: await freePort(),
    scheduler: await freePort(),
  };
}

export class PortInUseError extends Error {}

/** Checks every port a component will bind and names the flag to change for the first one taken. */
export async function assertPortsFree(
  host: string,
  ports: ReadonlyArray<{ port: number; what: string; flag: string }>,
): Promise<void> {
  for (const { port, what, flag } of ports) {
    try {
      await checkPortFree(host, port);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const reason = code === "EADDRINUSE" ? "is in use by another process" : `cannot be bound (${code})`;
      throw new PortInUseError(`port ${port} on ${host} (${what}) ${reason}; pick another with ${flag}`);
    }
  }
}
