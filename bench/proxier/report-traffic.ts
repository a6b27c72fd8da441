// The report's "Connections and packets" section: how new connections per second and CPU per packet were
// measured, and one row per proxy run.
import { type ConnectLoop, failures } from "./connect-rate.js";
import type { StreamCost } from "./cpu-per-packet.js";
import { implLabel, MODE_LABEL } from "./proxies.js";
import type { Report, RunResult } from "./report.js";

const perSecond = (x: ConnectLoop) => `${x.perSecond.toFixed(0)}/s${failures(x) ? ` (${failures(x)})` : ""}`;

/** "17.20 µs (16.9–18.1)": the median round, and the range of all rounds when there are several. */
function perPacket(median: StreamCost, rounds: readonly number[]): string {
  const range =
    rounds.length > 1 ? ` (${Math.min(...rounds).toFixed(1)}–${Math.max(...rounds).toFixed(1)})` : "";
  return `${median.cpuUsPerPacket.toFixed(2)} µs${range}`;
}

function row(r: RunResult): string {
  const c = r.connectRate;
  const k = r.packetCost;
  const failed = r.trafficError ? `failed: ${r.trafficError}` : "n/a";
  const share =
    c && c.ceiling.perSecond > 0
      ? ` = ${((c.service.perSecond / c.ceiling.perSecond) * 100).toFixed(0)}%`
      : "";
  return [
    "",
    r.services,
    MODE_LABEL[r.mode],
    implLabel(r.impl, r.mode),
    c ? perSecond(c.service) : failed,
    c ? `${perSecond(c.ceiling)}${share}` : "",
    c ? `${c.service.clientUserUs.toFixed(0)} / ${c.service.clientSystemUs.toFixed(0)} µs` : "",
    k ? perPacket(k.service, k.serviceRounds) : failed,
    k ? perPacket(k.floor, k.floorRounds) : "",
    k
      ? `${(k.service.packetsPerSecond / 1000).toFixed(0)} kpkt/s, ${k.service.mibPerSecond.toFixed(0)} MiB/s, ksoftirqd ${(k.service.ksoftirqdShare * 100).toFixed(0)}%`
      : "",
    (r.trafficLoad ?? r.load).toFixed(1),
    "",
  ]
    .join(" | ")
    .trim();
}

export function trafficSection(
  r: Pick<Report, "runs" | "trafficSeconds" | "connectWorkers" | "connectRounds" | "streamRounds">,
): string[] {
  return [
    "## Connections and packets",
    "",
    "New connections per second: `bench/proxier/connect-rate.py`, TCP_CRR-style (connect, read the pod's answer",
    `to its end, close; the pods' servers answer at accept and close first), in ${r.connectWorkers} forked workers from the`,
    "client to Service #1's ClusterIP (three pods), and the same loop to the three pod IPs in turn: the ceiling",
    "without the Service (the netfilter modes still track those connections; ebpf mode's node tracks nothing).",
    `${r.connectRounds} round(s) of ${r.trafficSeconds} s each, alternating (A B B A), added up. A failure is a connect`,
    "refused, reset, or not answered within 1 s. The client's CPU per connection is the workers' user time (the",
    "Python loop itself: what the client adds) and system time (their syscalls, and the packets' path that the",
    "kernel runs in their context). The ceiling's column ends with the Service's rate as a share of it.",
    "In the netfilter modes the client, outside the cluster CIDR, is masqueraded, on random ports (`fully-random`,",
    "both proxies); a port drawn again while a pod still holds its last connection in TIME_WAIT loses the SYN,",
    "and the connect waits 1 s (a failure here). A side check with a two-rule nftables NAT on the same namespaces",
    "(2026-12-06) lost SYNs with `masquerade fully-random` (5 in 3 s, the rate fell to a sixth) and none with",
    "plain `masquerade`. ebpf mode translates nothing, so it has no such loss.",
    "",
    `CPU per packet: one TCP stream for ${r.trafficSeconds} s from the client to Service #1's second port (a sink in each`,
    `pod reads it), then the same to a pod's IP (the floor); ${r.streamRounds} round(s) of each, alternating, the median`,
    "shown with the range. The client's interface sends one segment per packet while measuring (`gso_max_segs 1`),",
    "so every packet is wire-sized and, in the netfilter modes, translated by the node (DNAT, and masquerade since",
    "the client is outside the cluster CIDR); ebpf mode chose the pod at connect, and its node, with no rules,",
    "tracks nothing and forwards the packets untouched. The CPU is the scheduler's run time",
    "(`/proc/<pid>/schedstat`) of the sender, the sink and the ksoftirqd threads during the stream: on this kernel",
    "(tick accounting, no IRQ time accounting) a task's run time includes the softirqs that ran on its CPU while",
    "it was there, and a veth runs the receiving side's softirq on the sending CPU, so the node's forwarding is",
    "counted where it ran, and other processes on the machine are not (unless they left softirqs to ksoftirqd).",
    "Packets: the node's eth0 counters, both ways (data and ACKs).",
    "",
    "| Services | mode | proxy | new conn/s through the ClusterIP | to the pod IPs (ceiling) | client CPU per connection, user / system | CPU per packet through the ClusterIP | to a pod IP (floor) | stream through the ClusterIP | load at these measurements |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...r.runs.filter((x) => !x.error).map(row),
    "",
  ];
}
