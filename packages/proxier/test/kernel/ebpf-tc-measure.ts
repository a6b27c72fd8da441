// Measures the two designs of the tc path on the same topology, for the report (not a test: nothing is asserted
// but that every connection was answered). Each round builds a fresh topology, sets one datapath up and has the
// client open COUNT TCP connections one after the other to the NodePort (or, for the baseline, to a pod itself,
// routed through the node with no translation and no conntrack):
//
//   kfunc     tc.c: conntrack entries with NAT information, the kernel's NAT and conntrack (on for the namespace)
//   own-maps  tc-ownct.c: the program's own conntrack and NAT maps, packets redirected past the stack
//   direct    no program: the client connects to the pod's address
//   direct-ct the same with the NAT hooks' table in the node (conntrack on): what turning the hooks on costs flows
//             that are no service's
//
// Per round: connections per second (client loop included), connect() time (a SYN's way there and its SYN/ACK's
// way back: over veth pairs the whole path runs inside the client's system call), CPU per connection (the
// client's and the servers' user + system time, which over veth pairs includes the softirq work of every hop),
// the throughput of one TCP stream of STREAM_MB through the same frontend (an established flow's packets), and
// the programs' own time per run (kernel.bpf_stats_enabled, switched on for the rounds and back off after).
//
//   node --import tsx packages/proxier/test/kernel/ebpf-tc-measure.ts [COUNT] [ROUNDS]
import { readFileSync, writeFileSync } from "node:fs";
import { removeSockPrograms, tcLinksDir } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { ensureNatHooks } from "../../src/apply/bpf-tc-nat-hooks.js";
import { inNetns, realExec } from "../../src/apply/exec.js";
import { encodeStruct } from "../../src/ebpf/codec.js";
import { masqueradeKey, masqueradeValue, serviceFlags } from "../../src/ebpf/layout.js";
import { testPinRoot } from "./ebpf-fixture.js";
import {
  attachPrototypeIn,
  externalServiceSteps,
  loadTcIn,
  PeerServers,
  removeTcIn,
  sequentialConnects,
} from "./ebpf-tc-fixture.js";
import { compilePrototype, removePrototype } from "./ebpf-tc-prototype.js";
import { Topology } from "./topology.js";

const COUNT = Number(process.argv[2] ?? 3000);
const ROUNDS = Number(process.argv[3] ?? 2);
const PODS = ["10.180.0.1", "10.180.0.2"];
const NODE_IP = "192.168.0.2";
const NODE_PORT = 30080;
const TARGET_PORT = 8080;
/** The pods' sink (PeerServers listens on the target port + 1) and the NodePort in front of it. */
const SINK_PORT = TARGET_PORT + 1;
const SINK_NODE_PORT = 30081;
const STREAM_MB = 512;

type Design = "kfunc" | "own-maps" | "direct" | "direct-ct";

const STREAM = String.raw`
import json, socket, sys, time
host, port, megabytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
chunk = b"x" * (1 << 20)
s = socket.create_connection((host, port), timeout=10)
started = time.perf_counter()
for _ in range(megabytes):
    s.sendall(chunk)
s.shutdown(socket.SHUT_WR)
got = int(s.recv(100))
seconds = time.perf_counter() - started
print(json.dumps({"mbps": round(got * 8 / seconds / 1e6), "complete": got == megabytes << 20}))
`;

/** user + system seconds a process has used, from /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function setUp(design: Design, topo: Topology, pinRoot: string): Promise<void> {
  if (design === "direct" || design === "direct-ct") {
    const r = await realExec("ip", ["-n", topo.client, "route", "add", "10.180.0.0/24", "via", NODE_IP]);
    if (r.code !== 0) throw new Error(r.stderr);
    if (design === "direct-ct") await ensureNatHooks(inNetns(topo.node, realExec));
    return;
  }
  if (design === "kfunc") {
    await loadTcIn(topo.node, { devices: ["eth0"], masquerade: { IPv4: NODE_IP }, pinRoot });
  } else {
    const objectPath = compilePrototype();
    try {
      await attachPrototypeIn(topo.node, objectPath, pinRoot, [
        { device: "eth0", program: "tc_ownct_ingress" },
        { device: "br0", program: "tc_ownct_reply" },
      ]);
    } finally {
      removePrototype(objectPath);
    }
  }
  const store = await KernelBPFMapStore.open(pinRoot);
  try {
    const backends = PODS.map((address, i) => ({ id: i + 1, address, port: TARGET_PORT }));
    const svc = { family: "IPv4", address: NODE_IP, port: NODE_PORT, proto: "TCP", revNatIndex: 1 } as const;
    await store.write("IPv4", externalServiceSteps({ ...svc, flags: serviceFlags.NODE_PORT, backends }));
    const sinks = backends.map((b) => ({ ...b, id: b.id + 10, port: SINK_PORT }));
    const sink = {
      ...svc,
      port: SINK_NODE_PORT,
      revNatIndex: 2,
      flags: serviceFlags.NODE_PORT,
      backends: sinks,
    };
    await store.write("IPv4", externalServiceSteps(sink));
    const slot = encodeStruct(masqueradeKey, "IPv4", { slot: 0 });
    const node = encodeStruct(masqueradeValue, "IPv4", { address: NODE_IP });
    await store.write("IPv4", [{ map: "masquerade", op: "update", entries: [[slot, node]] }]);
  } finally {
    store.close();
  }
}

/** Each attached program's runs and mean time per run, from the links pinned under the pin root's tc/. */
async function programStats(pinRoot: string): Promise<Record<string, { runs: number; nsPerRun: number }>> {
  const stats: Record<string, { runs: number; nsPerRun: number }> = {};
  const links = await realExec("sh", ["-c", `ls ${tcLinksDir(pinRoot)} 2>/dev/null`]);
  for (const name of links.stdout.split("\n").filter(Boolean)) {
    const link = await realExec("bpftool", [
      "-j",
      "link",
      "show",
      "pinned",
      `${tcLinksDir(pinRoot)}/${name}`,
    ]);
    const progId = (JSON.parse(link.stdout) as { prog_id: number }).prog_id;
    const prog = JSON.parse(
      (await realExec("bpftool", ["-j", "prog", "show", "id", String(progId)])).stdout,
    ) as {
      name: string;
      run_time_ns?: number;
      run_cnt?: number;
    };
    const runs = prog.run_cnt ?? 0;
    stats[prog.name] = { runs, nsPerRun: runs ? Math.round((prog.run_time_ns ?? 0) / runs) : 0 };
  }
  return stats;
}

async function round(design: Design, n: number) {
  const topo = await Topology.create(`sy-ebtm${process.pid}`, PODS);
  const servers = new PeerServers();
  const pinRoot = testPinRoot(`tc-measure-${n}`);
  try {
    for (const pod of topo.pods) await servers.start(pod.netns, pod.name, TARGET_PORT);
    await setUp(design, topo, pinRoot);
    const [host, port] = design.startsWith("direct") ? [PODS[0] ?? "", TARGET_PORT] : [NODE_IP, NODE_PORT];
    const serversBefore = servers.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const m = await sequentialConnects(topo.client, host, port, COUNT);
    const serversCpu = servers.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0) - serversBefore;
    const sinkPort = design.startsWith("direct") ? SINK_PORT : SINK_NODE_PORT;
    const stream = await realExec("ip", [
      "netns",
      "exec",
      topo.client,
      "python3",
      "-c",
      STREAM,
      host,
      String(sinkPort),
      String(STREAM_MB),
    ]);
    if (stream.code !== 0) throw new Error(stream.stderr);
    return {
      design,
      connectionsPerSecond: Math.round(COUNT / m.seconds),
      failures: m.failures,
      connectUs: { p50: m.p50, p90: m.p90, p99: m.p99 },
      cpuUsPerConnection: Math.round(((m.cpu + serversCpu) / COUNT) * 1e6),
      stream: JSON.parse(stream.stdout) as { mbps: number; complete: boolean },
      programs: await programStats(pinRoot),
    };
  } finally {
    await servers.stop();
    await removeTcIn(topo.node, pinRoot).catch(() => {});
    await removeSockPrograms(pinRoot);
    await topo.destroy();
  }
}

const STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled";
const statsBefore = readFileSync(STATS_SYSCTL, "utf8").trim();
writeFileSync(STATS_SYSCTL, "1");
try {
  let n = 0;
  for (let i = 0; i < ROUNDS; i++) {
    for (const design of ["kfunc", "own-maps", "direct", "direct-ct"] as const)
      console.log(JSON.stringify(await round(design, n++)));
  }
} finally {
  writeFileSync(STATS_SYSCTL, statsBefore);
}
