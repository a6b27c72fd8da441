// What the tc kernel tests share: the loader run in the node's namespace, servers in the pods that answer with
// their name and the address they saw the client come from, and SCOPE_EXTERNAL service entries written with the
// codecs (as the renderer will write them).
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  TC_OBJECT_PATH,
  type TcLoadOptions,
  type TcLoadResult,
  type TcRemoval,
} from "../../src/apply/bpf-tc.js";
import { realExec } from "../../src/apply/exec.js";
import { SCOPE_EXTERNAL } from "../../src/ebpf/layout.js";
import type { MapWriteStep } from "../../src/ebpf/map-store.js";
import { ebpfTestsUnavailable, serviceSteps, type TestService } from "./ebpf-fixture.js";

/** Why the tc kernel tests cannot run here, or null when they can. */
export async function tcTestsUnavailable(): Promise<string | null> {
  const base = await ebpfTestsUnavailable();
  if (base) return base;
  if (!existsSync(TC_OBJECT_PATH)) return `${TC_OBJECT_PATH} is not built (npm run build)`;
  for (const tool of ["nsenter", "nft", "conntrack"]) {
    if ((await realExec("sh", ["-c", `command -v ${tool}`])).code !== 0) return `${tool} is not installed`;
  }
  return null;
}

const IN_NETNS = fileURLToPath(new URL("./ebpf-tc-in-netns.ts", import.meta.url));

async function inNetns(netns: string, args: readonly string[]): Promise<unknown> {
  const r = await realExec("nsenter", [
    `--net=/run/netns/${netns}`,
    process.execPath,
    "--import",
    "tsx",
    IN_NETNS,
    ...args,
  ]);
  if (r.code !== 0) throw new Error(`tc loader in ${netns}: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout);
}

export const loadTcIn = (netns: string, options: TcLoadOptions) =>
  inNetns(netns, ["load", JSON.stringify(options)]) as Promise<TcLoadResult>;

export const removeTcIn = (netns: string, pinRoot: string) =>
  inNetns(netns, ["remove", pinRoot]) as Promise<TcRemoval>;

/** Attaches the prototype's object (ebpf-tc-prototype.ts compiles it) in `netns`; returns the links' pins. */
export const attachPrototypeIn = (
  netns: string,
  objectPath: string,
  pinRoot: string,
  attachments: readonly { device: string; program: string }[],
) =>
  inNetns(netns, [
    "prototype",
    objectPath,
    pinRoot,
    ...attachments.map((a) => `${a.device}=${a.program}`),
  ]) as Promise<string[]>;

/** A service's steps with every key in scope EXTERNAL: what the tc program looks up. */
export function externalServiceSteps(svc: TestService): MapWriteStep[] {
  return serviceSteps(svc, SCOPE_EXTERNAL);
}

// Answers each TCP connection and UDP datagram with "<name> <address the client came from>". On port + 1, a sink:
// reads a TCP stream to its end and answers with the number of bytes it got (for throughput measurements).
const PEER_SERVER = `
const [name, port] = [process.argv[1], +process.argv[2]];
const net = require("node:net");
const dgram = require("node:dgram");
const plain = (a) => a.replace(/^::ffff:/, "");
const tcp = net.createServer((s) => s.end(name + " " + plain(s.remoteAddress)));
net.createServer({ allowHalfOpen: true }, (s) => {
  let bytes = 0;
  s.on("data", (d) => (bytes += d.length));
  s.on("end", () => s.end(String(bytes)));
}).listen(port + 1, "::");
const udp = dgram.createSocket({ type: "udp6", ipv6Only: false });
udp.on("message", (m, r) => udp.send(name + " " + plain(r.address), r.port, r.address));
udp.bind(port, "::", () => tcp.listen(port, "::", () => console.log("ready")));
`;

/** Servers started in namespaces; stop() ends them. */
export class PeerServers {
  readonly #children: ChildProcess[] = [];

  /** The servers' process ids (`ip netns exec` becomes the server itself). */
  get pids(): number[] {
    return this.#children.flatMap((c) => (c.pid === undefined ? [] : [c.pid]));
  }

  async start(netns: string, name: string, port: number): Promise<void> {
    const child = spawn(
      "ip",
      ["netns", "exec", netns, process.execPath, "-e", PEER_SERVER, name, String(port)],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    this.#children.push(child);
    const [chunk] = (await Promise.race([
      once(child.stdout, "data"),
      once(child, "exit").then(() => {
        throw new Error(`server ${name} in ${netns} exited before it was ready`);
      }),
    ])) as [Buffer];
    if (!String(chunk).includes("ready")) throw new Error(`server ${name} in ${netns}: ${String(chunk)}`);
  }

  async stop(): Promise<void> {
    for (const child of this.#children) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await once(child, "exit").catch(() => {});
      }
    }
    this.#children.length = 0;
  }
}

/**
 * A Python client of `count` TCP connects one after the other, each read to its end: the measurement scripts'
 * connection loop (ebpf-tc-measure.ts, ebpf-xdp-measure.ts), printing its time, failures, CPU and connect times.
 */
const SEQUENTIAL_CONNECTS = String.raw`
import json, resource, socket, sys, time
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
connect_us, failures = [], 0
started = time.perf_counter()
for _ in range(count):
    s = socket.socket()
    s.settimeout(1.0)
    try:
        t = time.perf_counter()
        s.connect((host, port))
        connect_us.append((time.perf_counter() - t) * 1e6)
        while s.recv(100):
            pass
    except OSError:
        failures += 1
    s.close()
seconds = time.perf_counter() - started
ru = resource.getrusage(resource.RUSAGE_SELF)
connect_us.sort()
pick = lambda q: round(connect_us[min(len(connect_us) - 1, int(q * len(connect_us)))], 1) if connect_us else None
print(json.dumps({"seconds": seconds, "failures": failures, "cpu": ru.ru_utime + ru.ru_stime,
                  "p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99)}))
`;

export interface SequentialConnects {
  seconds: number;
  failures: number;
  /** The client's own CPU seconds, user and system. */
  cpu: number;
  p50: number;
  p90: number;
  p99: number;
}

/** Runs the connection loop from `netns` to host:port; throws with the client's stderr if it fails. */
export async function sequentialConnects(
  netns: string,
  host: string,
  port: number,
  count: number,
): Promise<SequentialConnects> {
  const args = [
    "netns",
    "exec",
    netns,
    "python3",
    "-c",
    SEQUENTIAL_CONNECTS,
    host,
    String(port),
    String(count),
  ];
  const r = await realExec("ip", args);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as SequentialConnects;
}
