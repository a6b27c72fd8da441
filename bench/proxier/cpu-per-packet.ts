// CPU per packet of one steady TCP stream through Service #1's stream port, for a fixed time: stream-send.py in
// the client (in ebpf mode's cgroup) writes to a stream-sink.py in each pod. Every packet crosses the node
// namespace, where the netfilter modes translate it (conntrack, DNAT, and masquerade: the client is outside the
// cluster CIDR) and ebpf mode, which chose the pod at connect, forwards it untouched.
//
// The CPU is the scheduler's run time of the three kinds of thread the flow runs on: the sender, the sink and
// the ksoftirqd threads. On this kernel (tick accounting, no IRQ time accounting) a task's run time includes the
// softirqs that ran while it was on the CPU, and a veth hands each packet to the softirq of the CPU that sent it,
// so the node's forwarding runs in the sender's (or for the ACKs the sink's) time, or in ksoftirqd's when the
// softirq is deferred. Unlike /proc/stat's machine-wide system and softirq columns it does not take in the other
// processes on the machine (only what they leave to ksoftirqd). Packets are the node's eth0 counters, both ways
// (data and ACKs). The client's interface sends one segment per packet (gso_max_segs 1) while measuring, so the
// count is of wire-sized packets, each translated once, not of 64 KiB GSO batches.
//
// The same stream straight to a pod's IP is the floor: the same path without the Service. Rounds alternate the
// two, and each figure is the median of its rounds.
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { sh } from "@switchyard/kube-proxy-app/testing";
import { inClient } from "./client.js";
import { REAL_POD_IPS, STREAM_PORT } from "./cluster.js";
import type { ProxyUnderTest } from "./proxies.js";

const SENDER = join(import.meta.dirname, "stream-send.py");
const SINK = join(import.meta.dirname, "stream-sink.py");

export interface StreamCost {
  /** CPU per packet, µs. */
  readonly cpuUsPerPacket: number;
  readonly packetsPerSecond: number;
  readonly mibPerSecond: number;
  /** Of the CPU, the share run in ksoftirqd (deferred softirqs). */
  readonly ksoftirqdShare: number;
}

export interface PacketCost {
  /** Through the ClusterIP: the round with the median CPU per packet. */
  readonly service: StreamCost;
  /** Straight to a pod's IP, likewise. */
  readonly floor: StreamCost;
  /** Every round's CPU per packet, µs. */
  readonly serviceRounds: readonly number[];
  readonly floorRounds: readonly number[];
}

/** The round with the median CPU per packet (the lower middle one of an even count). */
function medianRound(rounds: readonly StreamCost[]): StreamCost {
  const sorted = [...rounds].sort((a, b) => a.cpuUsPerPacket - b.cpuUsPerPacket);
  const mid = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!mid) throw new Error("no stream round");
  return mid;
}

/** The scheduler's run time of every ksoftirqd thread, ns. */
function ksoftirqdNs(): number {
  let total = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("ksoftirqd/")) continue;
      total += Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // not a kernel thread we can read, or gone
    }
  }
  return total;
}

/** Packets through the node's eth0 (to and from the client), both directions. */
function nodePackets(p: ProxyUnderTest): number {
  const [link] = JSON.parse(p.net.in(p.net.node, ["ip", "-s", "-j", "link", "show", "dev", "eth0"])) as {
    stats64: { rx: { packets: number }; tx: { packets: number } };
  }[];
  return (link?.stats64.rx.packets ?? 0) + (link?.stats64.tx.packets ?? 0);
}

/** A stream-sink.py in one pod, and the lines it printed so far. */
interface Sink {
  readonly child: ChildProcess;
  readonly lines: string[];
}

function startSink(ns: string): Sink {
  const child = spawn("ip", ["netns", "exec", ns, "python3", SINK, String(STREAM_PORT)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const sink: Sink = { child, lines: [] };
  let partial = "";
  child.stdout?.on("data", (d: Buffer) => {
    const parts = (partial + d.toString()).split("\n");
    partial = parts.pop() ?? "";
    sink.lines.push(...parts);
  });
  return sink;
}

/** Waits until one of the sinks has printed more than `seen[i]` lines; that new line. */
async function newLine(sinks: readonly Sink[], seen: readonly number[], timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const [i, s] of sinks.entries()) {
      const line = s.lines[seen[i] ?? 0];
      if (line !== undefined) return line;
    }
    if (Date.now() > deadline) throw new Error(`no pod's stream sink printed a line in ${timeoutMs} ms`);
    await sleep(20);
  }
}

async function stream(
  p: ProxyUnderTest,
  sinks: readonly Sink[],
  host: string,
  seconds: number,
): Promise<StreamCost> {
  const seen = sinks.map((s) => s.lines.length);
  const packets0 = nodePackets(p);
  const soft0 = ksoftirqdNs();
  const argv = ["python3", SENDER, host, String(STREAM_PORT), String(seconds)];
  const sent = JSON.parse(inClient(p, argv, (seconds + 40) * 1000)) as {
    bytes: number;
    seconds: number;
    cpuNs: number;
  };
  // Whichever pod the Service picked reports; the sender waited for its close, so the line is on its way.
  const sink = JSON.parse(await newLine(sinks, seen, 10_000)) as { bytes: number; cpuNs: number };
  const softNs = ksoftirqdNs() - soft0;
  const packets = nodePackets(p) - packets0;
  if (sink.bytes !== sent.bytes)
    throw new Error(`stream to ${host}: sent ${sent.bytes} B, the sink read ${sink.bytes}`);
  const cpuNs = sent.cpuNs + sink.cpuNs + softNs;
  return {
    cpuUsPerPacket: cpuNs / 1000 / packets,
    packetsPerSecond: packets / sent.seconds,
    mibPerSecond: sent.bytes / 2 ** 20 / sent.seconds,
    ksoftirqdShare: softNs / cpuNs,
  };
}

/** The client interface's gso_max_segs now. */
function gsoMaxSegs(p: ProxyUnderTest): number {
  const [link] = JSON.parse(p.net.in(p.net.client, ["ip", "-d", "-j", "link", "show", "dev", "eth0"])) as {
    gso_max_segs?: number;
  }[];
  return link?.gso_max_segs ?? 65535;
}

const setGsoMaxSegs = (p: ProxyUnderTest, n: number) =>
  sh(["ip", "-n", p.net.client, "link", "set", "dev", "eth0", "gso_max_segs", String(n)]);

export async function cpuPerPacket(
  p: ProxyUnderTest,
  clusterIP: string,
  options: { seconds: number; rounds: number },
): Promise<PacketCost> {
  const { seconds, rounds } = options;
  const sinks = p.net.pods.map((pod) => startSink(pod.ns));
  const gso = gsoMaxSegs(p);
  try {
    for (const s of sinks) await newLine([s], [0], 10_000); // "ready"
    setGsoMaxSegs(p, 1);
    const service: StreamCost[] = [];
    const floor: StreamCost[] = [];
    for (let k = 0; k < rounds; k++) {
      service.push(await stream(p, sinks, clusterIP, seconds));
      floor.push(await stream(p, sinks, REAL_POD_IPS[0] ?? "", seconds));
    }
    return {
      service: medianRound(service),
      floor: medianRound(floor),
      serviceRounds: service.map((x) => x.cpuUsPerPacket),
      floorRounds: floor.map((x) => x.cpuUsPerPacket),
    };
  } finally {
    setGsoMaxSegs(p, gso);
    for (const s of sinks) s.child.kill("SIGKILL");
    await sleep(50);
  }
}
