// Measures what the XDP program changes for new flows from outside (not a test: nothing is asserted but that the
// connections were answered). Each round builds a fresh topology, loads the tc program with acceleration
// disabled (tc alone) or native (XDP ahead of tc on the node's eth0, a veth) and has the client open COUNT TCP
// connections one after the other to a NodePort with two pods behind it. Per round: connections per second
// (client loop included), connect() time percentiles (over veth the SYN's whole path and the SYN/ACK's way back
// run inside the client's system call), and the XDP program's own time per run (kernel.bpf_stats_enabled,
// switched on for the rounds and restored after).
//
//   node --import tsx packages/proxier/test/kernel/ebpf-xdp-measure.ts [COUNT] [ROUNDS]
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { removeSockPrograms, xdpLinksDir } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import type { XdpAcceleration } from "../../src/apply/bpf-xdp.js";
import { realExec } from "../../src/apply/exec.js";
import { serviceFlags } from "../../src/ebpf/layout.js";
import { testPinRoot } from "./ebpf-fixture.js";
import {
  externalServiceSteps,
  loadTcIn,
  PeerServers,
  removeTcIn,
  sequentialConnects,
} from "./ebpf-tc-fixture.js";
import { Topology } from "./topology.js";

const COUNT = Number(process.argv[2] ?? 2000);
const ROUNDS = Number(process.argv[3] ?? 3);
const PODS = ["10.180.0.1", "10.180.0.2"];
const NODE_IP = "192.168.0.2";
const NODE_PORT = 30080;
const TARGET_PORT = 8080;

/** The XDP program's runs and mean time per run, or null without an XDP link. */
async function xdpStats(pinRoot: string): Promise<{ runs: number; nsPerRun: number } | null> {
  const link = await realExec("bpftool", [
    "-j",
    "link",
    "show",
    "pinned",
    join(xdpLinksDir(pinRoot), "eth0"),
  ]);
  if (link.code !== 0) return null;
  const progId = (JSON.parse(link.stdout) as { prog_id: number }).prog_id;
  const prog = await realExec("bpftool", ["-j", "prog", "show", "id", String(progId)]);
  const { run_cnt: runs = 0, run_time_ns: ns = 0 } = JSON.parse(prog.stdout) as {
    run_cnt?: number;
    run_time_ns?: number;
  };
  return { runs, nsPerRun: runs ? Math.round(ns / runs) : 0 };
}

async function round(acceleration: XdpAcceleration, n: number) {
  const topo = await Topology.create(`sy-ebxm${process.pid}`, PODS);
  const servers = new PeerServers();
  const pinRoot = testPinRoot(`xdp-measure-${n}`);
  try {
    for (const pod of topo.pods) await servers.start(pod.netns, pod.name, TARGET_PORT);
    await loadTcIn(topo.node, { devices: ["eth0"], masquerade: { IPv4: NODE_IP }, pinRoot, acceleration });
    const store = await KernelBPFMapStore.open(pinRoot);
    try {
      const backends = PODS.map((address, i) => ({ id: i + 1, address, port: TARGET_PORT }));
      const svc = {
        family: "IPv4",
        address: NODE_IP,
        port: NODE_PORT,
        proto: "TCP",
        revNatIndex: 1,
      } as const;
      await store.write("IPv4", externalServiceSteps({ ...svc, flags: serviceFlags.NODE_PORT, backends }));
    } finally {
      store.close();
    }
    const m = await sequentialConnects(topo.client, NODE_IP, NODE_PORT, COUNT);
    return {
      acceleration,
      connectionsPerSecond: Math.round(COUNT / m.seconds),
      failures: m.failures,
      connectUs: { p50: m.p50, p90: m.p90, p99: m.p99 },
      xdp: await xdpStats(pinRoot),
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
    for (const acceleration of ["disabled", "native"] as const)
      console.log(JSON.stringify(await round(acceleration, n++)));
  }
} finally {
  writeFileSync(STATS_SYSCTL, statsBefore);
}
