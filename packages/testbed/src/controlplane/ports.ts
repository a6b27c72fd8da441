import { createSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { createServer, isIPv6 } from "node:net";
import type { ControlPlanePorts } from "./options.js";

/** Resolves when nothing listens on host:port; rejects with the reason otherwise (EADDRINUSE, EACCES...). */
export function checkPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/**
 * Ports a test may hand to a server: 20000-29999, below Kubernetes' NodePort range and above its components' default
 * ports, less the kernel's ephemeral range (see freePort). Empty when that range covers the whole band.
 */
export function serverPortBand(ephemeral: readonly [number, number]): readonly [number, number] | undefined {
  const [low, high] = ephemeral;
  const band: [number, number] = [20_000, 29_999];
  if (high < band[0] || low > band[1]) return band;
  if (low > band[0]) return [band[0], low - 1];
  if (high < band[1]) return [high + 1, band[1]];
  return undefined;
}

function ephemeralRange(): [number, number] {
  try {
    const [low = 32768, high = 60999] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    return [low, high];
  } catch {
    return [32768, 60999];
  }
}

function udpPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket(isIPv6(host) ? "udp6" : "udp4");
    socket.once("error", () => {
      socket.close();
      resolve(false);
    });
    socket.bind({ address: host, port, exclusive: true }, () => socket.close(() => resolve(true)));
  });
}

/**
 * A port free for TCP and UDP on host right now (there is a small race until the user binds it), outside the
 * kernel's ephemeral range. Inside it, the kernel may give the same port to a client's socket: dig sets
 * SO_REUSEPORT on its UDP sockets and CoreDNS on its listeners, so a dig could be bound to CoreDNS's own port and
 * read back its own query ("query response not set"; a CI run failed so, and a netns whose range is one port
 * shows it every time). `taken`: ports already handed out but not yet bound, passed over too.
 */
export async function freePort(
  host = "127.0.0.1",
  random = Math.random,
  taken: ReadonlySet<number> = new Set(),
): Promise<number> {
  const band = serverPortBand(ephemeralRange());
  for (let attempt = 0; band && attempt < 100; attempt++) {
    const port = band[0] + Math.floor(random() * (band[1] - band[0] + 1));
    if (taken.has(port)) continue;
    const tcpFree = await checkPortFree(host, port).then(
      () => true,
      () => false,
    );
    if (tcpFree && (await udpPortFree(host, port))) return port;
  }
  return kernelPickedPort(host);
}

/** A port the kernel picks (in its ephemeral range), for hosts whose range leaves no band outside it. */
function kernelPickedPort(host: string): Promise<number> {
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
  // None is bound before all are picked, so each is drawn apart from those before it.
  const taken = new Set<number>();
  const next = async () => {
    const port = await freePort("127.0.0.1", Math.random, taken);
    taken.add(port);
    return port;
  };
  return {
    apiserver: await next(),
    etcdClient: await next(),
    etcdPeer: await next(),
    controllerManager: await next(),
    scheduler: await next(),
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
