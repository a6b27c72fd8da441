// How long one run of the socket-destroy iterator takes with N connected UDP sockets open (run by hand, as root,
// after the build: node --import tsx test/kernel/ebpf-destroy-timing.ts [N ...]). A client in a namespace of its
// own, inside a cgroup of its own, connects N UDP sockets (at most the hard limit of open files) to a ClusterIP (balanced by the socket programs, so each
// has its lb4_reverse_sk entry); then runs are timed that end none of them (a flow to another backend: the cost of
// looking at every socket) and that end them all, and the client counts the sockets left holding ECONNABORTED.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { KernelSocketEnder } from "../../src/apply/bpf-destroy.js";
import { loadSockPrograms, removeSockPrograms } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { realExec } from "../../src/apply/exec.js";
import { ebpfTestsUnavailable, serviceSteps, TestCgroup, testPinRoot } from "./ebpf-fixture.js";

const SIZES = process.argv.slice(2).map(Number);
const CLUSTER_IP = "172.30.0.20";
const BACKEND = "10.180.0.1";

// Opens N connected sockets, says how many, then on each line of stdin counts the ones holding ECONNABORTED.
const CLIENT = `
import errno, resource, socket, sys
n = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 100, n + 100))
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((sys.argv[2], 53))
    socks.append(s)
print(len(socks), flush=True)
for _ in sys.stdin:
    aborted = sum(1 for s in socks if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == errno.ECONNABORTED)
    print(aborted, flush=True)
`;

async function must(cmd: string, args: string[]) {
  const r = await realExec(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr}`);
}

function startClient(netns: string, cgroup: TestCgroup, n: number) {
  const script = `echo $$ > ${cgroup.path}/cgroup.procs && code=$1; shift; exec ip netns exec "$0" python3 -c "$code" "$@"`;
  const child = spawn("sh", ["-c", script, netns, CLIENT, String(n), CLUSTER_IP]);
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const line = (await lines.next()).value;
    if (line === undefined) throw new Error(`the client stopped: ${stderr.trim().slice(-500)}`);
    return Number(line);
  };
  return { child, next };
}

function timed<T>(fn: () => T): [T, number] {
  const start = performance.now();
  const out = fn();
  return [out, performance.now() - start];
}

async function measure(ender: KernelSocketEnder, netns: string, cgroup: TestCgroup, n: number) {
  const client = startClient(netns, cgroup, n);
  const child: ChildProcessWithoutNullStreams = client.child;
  try {
    const opened = await client.next();
    const flow = (backendAddress: string) => ({
      frontendAddress: CLUSTER_IP,
      frontendPort: 53,
      backendAddress,
      backendPort: 53,
    });
    // Warm-up, then the scan alone, the median of five: a flow no socket is on.
    ender.endSync("IPv4", [flow("10.180.0.9")]);
    const scans = Array.from({ length: 5 }, () => timed(() => ender.endSync("IPv4", [flow("10.180.0.9")])));
    const none = scans[0]?.[0] ?? { ended: Number.NaN };
    const scanMs = scans.map(([, ms]) => ms).sort((a, b) => a - b)[2] ?? Number.NaN;
    const [all, endMs] = timed(() => ender.endSync("IPv4", [flow(BACKEND)]));
    child.stdin.write("count\n");
    const aborted = await client.next();
    console.log(
      `${String(n).padStart(6)} sockets: scan ${scanMs.toFixed(2)} ms (ended ${none.ended}), ` +
        `end all ${endMs.toFixed(2)} ms (ended ${all.ended}); open ${opened}, aborted ${aborted}`,
    );
  } finally {
    child.stdin.end();
    child.kill("SIGKILL");
    if (child.exitCode === null) await once(child, "exit");
  }
}

async function main() {
  const skip = await ebpfTestsUnavailable();
  if (skip) throw new Error(skip);
  const netns = `sy-ebdt${process.pid}`;
  const pinRoot = testPinRoot("destroy-timing");
  const cgroup = new TestCgroup("destroy-timing");
  let ender: KernelSocketEnder | undefined;
  try {
    await must("ip", ["netns", "add", netns]);
    // A route to the backend is all a UDP connect needs; nothing is sent.
    await must("ip", ["-n", netns, "link", "add", "v0", "type", "veth", "peer", "name", "v1"]);
    await must("ip", ["-n", netns, "addr", "add", "10.180.0.254/24", "dev", "v0"]);
    for (const dev of ["v0", "v1"]) await must("ip", ["-n", netns, "link", "set", dev, "up"]);
    await loadSockPrograms({ cgroupPath: cgroup.path, pinRoot, families: ["IPv4"] });
    const store = await KernelBPFMapStore.open(pinRoot);
    const svc = {
      family: "IPv4" as const,
      address: CLUSTER_IP,
      port: 53,
      proto: "UDP" as const,
      revNatIndex: 1,
    };
    await store.write("IPv4", serviceSteps({ ...svc, backends: [{ id: 1, address: BACKEND, port: 53 }] }));
    store.close();
    ender = await KernelSocketEnder.open({ pinRoot, cgroupPath: cgroup.path, families: ["IPv4"] });
    for (const n of SIZES.length > 0 ? SIZES : [100, 1000, 10_000]) await measure(ender, netns, cgroup, n);
  } finally {
    ender?.close();
    await removeSockPrograms(pinRoot);
    await cgroup.remove();
    await realExec("ip", ["netns", "del", netns]);
  }
}

await main();
