// The side-by-side table and the checks against the brief's goals and claims C1-C3.
import type {
  BigServiceResult,
  Cost,
  ManyServicesResult,
  OneChangeResult,
  RollingResult,
} from "./scenarios.js";
import type { WriteTally } from "./slice-watch.js";

export interface Measured {
  big: BigServiceResult;
  oneChange: OneChangeResult;
  rolling: RollingResult;
  many: ManyServicesResult;
  /** VmRSS right after start-up and one probe Service's slices, before any scenario: the controller at rest. */
  restRssMiB: number;
}

export interface ReportInput {
  date: string;
  machine: string;
  kubernetes: string;
  quick: boolean;
  workload: {
    bigPods: number;
    rollingPods: number;
    rollingBatch: number;
    services: number;
    podsPerService: number;
    nodes: number;
  };
  ours: Measured;
  upstream: Measured;
  /** The many-Services scenario again, upstream with its client rate limit lifted. */
  upstreamUnthrottled: ManyServicesResult;
  totalS: number;
  /** 1-minute load average when the run started and ended (the cores are shared with other work). */
  load: [number, number];
}

const s = (x: number) => `${x.toFixed(2)} s`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const writes = (w: WriteTally) => `${w.total} (${w.create} create, ${w.update} update, ${w.delete} delete)`;
const mark = (ok: boolean) => (ok ? "yes" : "**no**");
const mib = (m: number) => `${m.toFixed(0)} MiB`;
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

export function renderReport(r: ReportInput): string {
  const { ours: o, upstream: u, workload: w } = r;
  const bigSlices = Math.ceil(w.bigPods / 100);
  const x = r.upstreamUnthrottled;
  const cost = (c: Cost) => `${c.cpuS.toFixed(1)} s CPU, ${c.staleSyncs} stale`;
  const na = "–";
  const rows: [string, string, string, string, string][] = [
    [
      `**${w.bigPods}-pod Service**: slices`,
      String(o.big.slices),
      String(u.big.slices),
      na,
      `exactly ${bigSlices}: ours ${mark(o.big.slices === bigSlices)}, upstream ${mark(u.big.slices === bigSlices)}`,
    ],
    [
      "… time to converge (selector patch → last slice write)",
      s(o.big.convergeS),
      s(u.big.convergeS),
      na,
      "",
    ],
    ["… API writes", writes(o.big.writes), writes(u.big.writes), na, ""],
    ["… controller CPU time, syncs refused on a stale cache", cost(o.big.cost), cost(u.big.cost), na, ""],
    [
      "**one pod turns not ready**: API writes",
      writes(o.oneChange.writes),
      writes(u.oneChange.writes),
      na,
      `1: ours ${mark(o.oneChange.writes.total === 1)}, upstream ${mark(u.oneChange.writes.total === 1)}`,
    ],
    [
      "… bytes written (slice JSON as served on a watch)",
      o.oneChange.bytes.map(kib).join(" + "),
      u.oneChange.bytes.map(kib).join(" + "),
      na,
      "",
    ],
    [
      "… same without managedFields",
      o.oneChange.bytesWithoutManagedFields.map(kib).join(" + "),
      u.oneChange.bytesWithoutManagedFields.map(kib).join(" + "),
      na,
      "",
    ],
    [
      "… all of the Service's slices together (≈ one Endpoints-style object)",
      kib(o.oneChange.allSlicesBytes),
      kib(u.oneChange.allSlicesBytes),
      na,
      "",
    ],
    [
      "… slices whose resourceVersion changed",
      `${o.oneChange.slicesTouched} of ${o.oneChange.slicesTotal}`,
      `${u.oneChange.slicesTouched} of ${u.oneChange.slicesTotal}`,
      na,
      "",
    ],
    ["… status patch → slice write", s(o.oneChange.latencyS), s(u.oneChange.latencyS), na, ""],
    [
      `**${w.rollingPods}-pod rolling update** (batches of ${w.rollingBatch}): API writes`,
      writes(o.rolling.writes),
      writes(u.rolling.writes),
      na,
      `≤ upstream: ${mark(o.rolling.writes.total <= u.rolling.writes.total)}`,
    ],
    ["… final slices", String(o.rolling.slices), String(u.rolling.slices), na, ""],
    [
      `… fragmentation (slices / ${Math.ceil(w.rollingPods / 100)})`,
      o.rolling.fragmentation.toFixed(2),
      u.rolling.fragmentation.toFixed(2),
      na,
      `≤ upstream: ${mark(o.rolling.fragmentation <= u.rolling.fragmentation)}`,
    ],
    [
      "… time to converge (first batch → last slice write)",
      s(o.rolling.convergeS),
      s(u.rolling.convergeS),
      na,
      "",
    ],
    ["… (time the driver took to replace the pods)", s(o.rolling.driveS), s(u.rolling.driveS), na, ""],
    [
      "… controller CPU time, syncs refused on a stale cache",
      cost(o.rolling.cost),
      cost(u.rolling.cost),
      na,
      "",
    ],
    [
      `**${w.services} Services × ${w.podsPerService} pods**: time to converge (first Service create → last slice write)`,
      s(o.many.convergeS),
      s(u.many.convergeS),
      s(x.convergeS),
      "",
    ],
    [
      "… (time to create the Services)",
      s(o.many.createServicesS),
      s(u.many.createServicesS),
      s(x.createServicesS),
      "",
    ],
    ["… API writes", writes(o.many.writes), writes(u.many.writes), writes(x.writes), ""],
    [
      "… controller CPU time, syncs refused on a stale cache",
      cost(o.many.cost),
      cost(u.many.cost),
      cost(x.cost),
      "",
    ],
    [
      "RSS at rest after start (synced, one probe Service, before the scenarios; VmRSS)",
      mib(o.restRssMiB),
      mib(u.restRssMiB),
      na,
      `ours/upstream ${(o.restRssMiB / u.restRssMiB).toFixed(2)}x`,
    ],
    [
      "… peak RSS of the controller process (VmHWM)",
      mib(o.many.peakRssMiB),
      mib(u.many.peakRssMiB),
      mib(x.peakRssMiB),
      "kube-controller-manager: whole process",
    ],
    [
      "… CPU time of the process since it started",
      `${o.many.processCpuS.toFixed(1)} s`,
      `${u.many.processCpuS.toFixed(1)} s`,
      `${x.processCpuS.toFixed(1)} s`,
      "",
    ],
  ];
  const table = [
    "| metric | ours | upstream | upstream, client unthrottled | goal / check |",
    "|---|---|---|---|---|",
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ];
  const one = (m: Measured) => sum(m.oneChange.bytes);
  const share = (m: Measured) => ((100 * one(m)) / m.oneChange.allSlicesBytes).toFixed(1);
  const rollCreatesDeletes = (m: Measured) => m.rolling.writes.create + m.rolling.writes.delete;
  const checks = [
    `- **C1** (50 slices; one pod dying updates one slice, 49 untouched): upstream wrote ${u.oneChange.writes.total} slice(s), ` +
      `${u.oneChange.slicesTouched} of ${u.oneChange.slicesTotal} changed, ${kib(one(u))} = ${share(u)}% of the bytes of all slices; ` +
      `ours ${o.oneChange.writes.total}, ${o.oneChange.slicesTouched} of ${o.oneChange.slicesTotal}, ${kib(one(o))} = ${share(o)}%.`,
    `- **C2** (fill before create, no merging, half-empty slices allowed): in the rolling update upstream made ` +
      `${rollCreatesDeletes(u)} creates+deletes out of ${u.rolling.writes.total} writes and ended at ${u.rolling.slices} slices ` +
      `(fragmentation ${u.rolling.fragmentation.toFixed(2)}); ours ${rollCreatesDeletes(o)} of ${o.rolling.writes.total}, ` +
      `${o.rolling.slices} slices (${o.rolling.fragmentation.toFixed(2)}).`,
    `- **C3** (slices per Service × port set × family): one port, IPv4 only, ${w.bigPods} pods → upstream ${u.big.slices}, ours ${o.big.slices} ` +
      `slices (${bigSlices} expected); ${w.services} one-port Services → upstream ${u.many.slices}, ours ${o.many.slices} slices.`,
  ];
  return [
    `# EndpointSlice controller: ours vs upstream (${r.date})`,
    "",
    `Machine: ${r.machine}`,
    `Upstream: kube-controller-manager ${r.kubernetes} with \`--controllers=endpointslice-controller\`, flags as in packages/slice-controller/test/upstream/controller-manager.ts ` +
      `(so its client keeps the default limit of 20 qps, burst 30); "client unthrottled" is the same plus \`--kube-api-qps=10000 --kube-api-burst=10000\`, run for the many-Services scenario only.`,
    `Ours: \`apps/slice-controller\` (\`--leader-elect=false\`, admin kubeconfig; it also runs the mirroring controller).`,
    `Each controller alone on its own fresh lab control plane (etcd + kube-apiserver), one after the other in the same run; ` +
      `${w.nodes} Nodes in 3 zones, Pods bound by spec.nodeName with status set through /status, 32 requests in flight. ` +
      `Writes are EndpointSlice events on a watch; "converged" means the slices are right and no write came for 3 s, measured to the last write. ` +
      `The 2000-Service scenario runs in a freshly started controller process after the earlier namespaces were emptied.` +
      (r.quick ? " **Quick run: workload scaled down 10x.**" : ""),
    `Whole run: ${(r.totalS / 60).toFixed(1)} min; 1-minute load average ${r.load[0].toFixed(1)} at the start, ${r.load[1].toFixed(1)} at the end (2 cores, shared with other work).`,
    "",
    ...table,
    "",
    "Claims (computed from the table):",
    "",
    ...checks,
    "",
  ].join("\n");
}
