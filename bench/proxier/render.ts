// Our renderers alone, no kernel, up to the text each tool reads: renderIPTables / renderNFTables (and its
// nft script), and renderEBPF up to its map writes, on N Services x 10 endpoints, full sync
// and a one-endpoint partial sync (from the previous state), median of several runs, and the heap the
// result keeps (heapUsed after minus before, both after a forced GC).
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { type MapWriteStep, renderEBPF, renderIPTables, renderNFTables } from "@switchyard/proxier";
import { buildMaps, iptOptions, makeService, makeSlice, nftOptions } from "@switchyard/proxier/testing";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { ENDPOINTS_PER_SERVICE, fakeIP, serviceName } from "./cluster.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export interface RenderResult {
  readonly mode: "iptables" | "nftables" | "ebpf";
  readonly services: number;
  readonly fullMs: number[];
  readonly partialMs: number[];
  /** Heap kept by one full result (its output and state), MiB. */
  readonly retainedMiB: number;
  /** Heap grown during one full render before any GC (garbage included), MiB. */
  readonly grownMiB: number;
  /** Output of one full and one partial render. */
  readonly fullBytes: number;
  readonly partialBytes: number;
}

export function cluster(n: number, alt = false): { services: Service[]; slices: EndpointSlice[] } {
  const services: Service[] = [];
  const slices: EndpointSlice[] = [];
  for (let i = 0; i < n; i++) {
    const name = serviceName(i);
    services.push(
      makeService("bench", name, {
        clusterIP: `172.30.${i >> 8}.${i & 255}`,
        ports: [{ name: "http", port: 80, protocol: "TCP" }],
      }),
    );
    const eps = Array.from({ length: ENDPOINTS_PER_SERVICE }, (_, e) => ({
      addresses: [fakeIP(i, e, alt && i === n >> 1 && e === 0)],
      nodeName: "node2",
      conditions: { ready: true, serving: true, terminating: false },
    }));
    slices.push(makeSlice("bench", name, "1", eps, [{ name: "http", port: 80 }]));
  }
  return { services, slices };
}

const MiB = 2 ** 20;

function measure<R>(
  mode: RenderResult["mode"],
  services: number,
  runs: number,
  full: () => R,
  partial: (previous: R) => R,
  size: (r: R) => number,
): RenderResult {
  const fullMs: number[] = [];
  const partialMs: number[] = [];
  let fullBytes = 0;
  let partialBytes = 0;
  full(); // warm-up (JIT)
  for (let r = 0; r < runs; r++) {
    let t0 = performance.now();
    const f = full();
    fullMs.push(performance.now() - t0);
    t0 = performance.now();
    const p = partial(f);
    partialMs.push(performance.now() - t0);
    fullBytes = size(f);
    partialBytes = size(p);
  }
  gc();
  const h0 = process.memoryUsage().heapUsed;
  const kept = full();
  const grown = process.memoryUsage().heapUsed - h0;
  gc();
  const retained = process.memoryUsage().heapUsed - h0;
  if (size(kept) < 0) throw new Error("unreachable"); // keeps `kept` alive across the GC
  return {
    mode,
    services,
    fullMs,
    partialMs,
    retainedMiB: retained / MiB,
    grownMiB: grown / MiB,
    fullBytes,
    partialBytes,
  };
}

/** The nftables renderer returns operations; the text `nft -f` gets is part of the render, as iptables' is. */
function withScript<R extends { transaction: { script(): string }; cleanup: { script(): string } | null }>(
  r: R,
): R & { script: string } {
  return { ...r, script: r.transaction.script() + (r.cleanup?.script() ?? "") };
}

/** The bytes of keys and values a list of map writes hands the kernel. */
function stepBytes(steps: readonly MapWriteStep[]): number {
  let n = 0;
  for (const s of steps) {
    if (s.batch) n += s.batch.keys.length + s.batch.values.length;
    else if (s.op === "update") for (const [k, v] of s.entries) n += k.length + v.length;
    else for (const k of s.keys) n += k.length;
  }
  return n;
}

export function benchRender(n: number, runs: number): RenderResult[] {
  const base = cluster(n);
  const changed = cluster(n, true);
  const maps = buildMaps("IPv4", base.services, base.slices);
  const mapsAfter = buildMaps("IPv4", changed.services, changed.slices);
  const changedServices = new Set([`bench/${serviceName(n >> 1)}`]);
  const out: RenderResult[] = [];

  const ipt = iptOptions("IPv4");
  const nft = nftOptions("IPv4", { serviceCIDRs: ["172.30.0.0/16"] });
  const ebpf = { family: "IPv4" as const, nodeName: "node1", nodeLabels: {}, nodePortIPs: [] };
  out.push(
    measure(
      "iptables",
      n,
      runs,
      () => renderIPTables(ipt, { ...maps, now: 0 }),
      (prev) => renderIPTables(ipt, { ...mapsAfter, changedServices, now: 1000 }, prev.state),
      (r) =>
        r.restoreChunks.reduce((n, c) => n + (typeof c === "string" ? Buffer.byteLength(c) : c.length), 0),
    ),
    measure(
      "nftables",
      n,
      runs,
      () => withScript(renderNFTables(nft, { ...maps, now: 0 })),
      (prev) => withScript(renderNFTables(nft, { ...mapsAfter, changedServices, now: 1000 }, prev.state)),
      (r) => Buffer.byteLength(r.script),
    ),
    measure(
      "ebpf",
      n,
      runs,
      () => renderEBPF(ebpf, { ...maps }),
      (prev) => renderEBPF(ebpf, { ...mapsAfter, changedServices }, prev.state),
      (r) => stepBytes(r.steps),
    ),
  );
  return out;
}
