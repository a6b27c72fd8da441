// What the eBPF kernel tests share: whether they can run here, a cgroup2 directory of their own (the programs act
// for its processes only), clients run inside it, what bpftool sees attached, and map entries written with the
// codecs the renderer uses.
import { existsSync, mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import type { IPFamily } from "@switchyard/basics";
import { cgroup2Root, readMounts } from "../../src/apply/bpf-fs.js";
import { loadLibbpf } from "../../src/apply/bpf-libbpf.js";
import { DEFAULT_OBJECT_PATH } from "../../src/apply/bpf-loader.js";
import { realExec } from "../../src/apply/exec.js";
import { encodeStruct } from "../../src/ebpf/codec.js";
import {
  backendKey,
  backendValue,
  PROTO_TCP,
  PROTO_UDP,
  SCOPE_INTERNAL,
  serviceKey,
  serviceValue,
} from "../../src/ebpf/layout.js";
import type { MapWriteStep } from "../../src/ebpf/map-store.js";
import { kernelTestsUnavailable } from "./topology.js";

/** Why the eBPF kernel tests cannot run here, or null when they can. */
export async function ebpfTestsUnavailable(): Promise<string | null> {
  const base = await kernelTestsUnavailable(["bpftool", "python3"]);
  if (base) return base;
  if (!existsSync(DEFAULT_OBJECT_PATH)) return `${DEFAULT_OBJECT_PATH} is not built (npm run build)`;
  if (cgroup2Root(readMounts()) === undefined) return "no cgroup2 mount";
  return loadLibbpf().then(
    () => null,
    (e: Error) => e.message,
  );
}

/** A unique name for this process's pins and cgroups. */
export const testName = (label: string) => `sy-ebpf-${label}-${process.pid}`;

export const testPinRoot = (label: string) => `/sys/fs/bpf/${testName(label)}`;

/** A cgroup2 directory for one test file; remove() ends what still runs in it (only our clients) and rmdirs it. */
export class TestCgroup {
  readonly path: string;
  constructor(label: string) {
    this.path = join(cgroup2Root(readMounts()) ?? "/sys/fs/cgroup", testName(label));
    mkdirSync(this.path);
  }

  async remove(): Promise<void> {
    if (!existsSync(this.path)) return;
    for (let attempt = 0; ; attempt++) {
      for (const pid of readFileSync(join(this.path, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {}
      }
      try {
        rmdirSync(this.path);
        return;
      } catch (e) {
        // A client that just exited leaves the cgroup a moment later.
        if (attempt >= 50) throw e;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }
}

export interface Attached {
  readonly id: number;
  readonly attachType: string;
  readonly name: string;
}

/** The programs attached to a cgroup directory, as bpftool lists them (its own attach type names). */
export async function attachedPrograms(cgroupPath: string): Promise<Attached[]> {
  const r = await realExec("bpftool", ["-j", "cgroup", "show", cgroupPath]);
  if (r.code !== 0) throw new Error(`bpftool cgroup show ${cgroupPath}: ${r.stderr}`);
  const list = JSON.parse(r.stdout.trim() || "[]") as Array<{
    id: number;
    attach_type: string;
    name: string;
  }>;
  return list.map((p) => ({ id: p.id, attachType: p.attach_type, name: p.name }));
}

// A client run inside the test cgroup: `count` tries of one kind, a JSON list of what each saw. Timeouts are
// short (the servers answer at once); the time each call took is in ms.
const CLIENT = String.raw`
import errno, json, socket, sys, time
mode, host, port, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
def one():
    kind = socket.SOCK_STREAM if mode == "tcp" else socket.SOCK_DGRAM
    s = socket.socket(fam, kind)
    s.settimeout(1.0)
    out = {}
    start = time.monotonic()
    try:
        if mode == "tcp":
            s.connect((host, port))
            out["peer"] = list(s.getpeername()[:2])
            data = b""
            while True:
                chunk = s.recv(100)
                if not chunk: break
                data += chunk
            out["answer"] = data.decode()
        elif mode == "udp-connected":
            s.connect((host, port))
            out["peer"] = list(s.getpeername()[:2])
            s.send(b"hi")
            out["answer"] = s.recv(100).decode()
        else:
            s.sendto(b"hi", (host, port))
            data, source = s.recvfrom(100)
            out["answer"] = data.decode()
            out["from"] = list(source[:2])
    except socket.timeout:
        out["error"] = "ETIMEDOUT"
    except OSError as e:
        out["error"] = errno.errorcode.get(e.errno, str(e.errno))
    out["ms"] = round((time.monotonic() - start) * 1000)
    s.close()
    return out
print(json.dumps([one() for _ in range(count)]))
`;

export type ClientMode = "tcp" | "udp-connected" | "udp-unconnected";

export interface ClientResult {
  readonly answer?: string;
  /** getpeername() after connect: [address, port]. */
  readonly peer?: [string, number];
  /** recvfrom()'s source. */
  readonly from?: [string, number];
  readonly error?: string;
  readonly ms: number;
}

/** Runs the client in `netns`, inside `cgroup` (its processes are the ones the programs serve) unless null. */
export async function runClient(
  netns: string,
  cgroup: TestCgroup | null,
  mode: ClientMode,
  host: string,
  port: number,
  count = 1,
): Promise<ClientResult[]> {
  // Into the cgroup first, then into the namespace: `ip netns exec` mounts a /sys of its own, where the
  // cgroup2 mount is not to be seen, and the cgroup is inherited across exec.
  const enter = cgroup ? `echo $$ > ${cgroup.path}/cgroup.procs && ` : "";
  const script = `${enter}code=$1; shift; exec ip netns exec "$0" python3 -c "$code" "$@"`;
  const args = ["-c", script, netns, CLIENT, mode, host, String(port), String(count)];
  const r = await realExec("sh", args);
  if (r.code !== 0)
    throw new Error(`client ${mode} ${host} ${port} failed (${r.code}): ${r.stderr.trim().slice(-500)}`);
  return JSON.parse(r.stdout) as ClientResult[];
}

// ---- map entries ----

export interface TestService {
  readonly family: IPFamily;
  readonly address: string;
  readonly port: number;
  readonly proto: "TCP" | "UDP";
  readonly revNatIndex: number;
  readonly flags?: number;
  readonly affinityTimeout?: number;
  /** Backend ids with their address and port; written to the backends map too. */
  readonly backends: ReadonlyArray<{ id: number; address: string; port: number }>;
}

const protoNumber = (proto: "TCP" | "UDP") => (proto === "TCP" ? PROTO_TCP : PROTO_UDP);

/**
 * The write steps one service needs, in the order the renderer keeps: backends, then slots, then the service.
 * Socket-level balancing reads scope INTERNAL entries, the tc program scope EXTERNAL ones.
 */
export function serviceSteps(svc: TestService, scope = SCOPE_INTERNAL): MapWriteStep[] {
  const proto = protoNumber(svc.proto);
  const key = (backendSlot: number) =>
    encodeStruct(serviceKey, svc.family, {
      address: svc.address,
      dport: svc.port,
      backendSlot,
      proto,
      scope,
    });
  const value = (backendId: number, count: number) =>
    encodeStruct(serviceValue, svc.family, {
      backendId,
      affinityTimeout: svc.affinityTimeout ?? 0,
      count,
      revNatIndex: svc.revNatIndex,
      flags: svc.flags ?? 0,
    });
  const backends = svc.backends.map(
    (b) =>
      [
        encodeStruct(backendKey, svc.family, { backendId: b.id }),
        encodeStruct(backendValue, svc.family, { address: b.address, port: b.port, proto, flags: 0 }),
      ] as const,
  );
  return [
    { map: "backends", op: "update", entries: backends },
    {
      map: "services",
      op: "update",
      entries: svc.backends.map((b, i) => [key(i + 1), value(b.id, 0)] as const),
    },
    { map: "services", op: "update", entries: [[key(0), value(0, svc.backends.length)]] },
  ];
}

/**
 * Waits (5 s at most) until no address in `namespaces` is still tentative. The plan's global addresses skip
 * duplicate address detection, but link-local ones do not, and until theirs ends a router's first neighbour
 * solicitation can go unanswered: the first IPv6 connect then loses its SYN.
 */
export async function ipv6Settled(namespaces: readonly string[]): Promise<void> {
  const deadline = Date.now() + 5000;
  for (const ns of namespaces) {
    for (;;) {
      const r = await realExec("ip", ["-n", ns, "-6", "addr", "show", "tentative"]);
      if (r.code === 0 && r.stdout.trim() === "") break;
      if (Date.now() > deadline)
        throw new Error(`${ns}: IPv6 addresses still tentative after 5 s:\n${r.stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
