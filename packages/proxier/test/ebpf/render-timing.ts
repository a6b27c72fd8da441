// How long renderEBPF takes on N ClusterIP Services x 10 endpoints (default 10000): a full sync from nothing, a
// partial sync after one Service's first endpoint changed, and a full sync over that state (nothing to write). Not a test (a timing assertion would only measure
// the machine); run it by hand from the repository root:
//   node --import tsx packages/proxier/test/ebpf/render-timing.ts [services] [runs]
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { MapWriteStep } from "../../src/ebpf/map-store.js";
import { renderEBPF } from "../../src/ebpf/render.js";
import { buildMaps, makeService, makeSlice } from "../../src/testing/fixtures.js";
import { ebpfOptions } from "./helpers.js";

const services = Number(process.argv[2] ?? 10000);
const runs = Number(process.argv[3] ?? 5);
const ENDPOINTS = 10;

function cluster(n: number, changed?: number): { services: Service[]; slices: EndpointSlice[] } {
  const out = { services: [] as Service[], slices: [] as EndpointSlice[] };
  for (let i = 0; i < n; i++) {
    const name = `svc-${String(i).padStart(5, "0")}`;
    out.services.push(
      makeService("bench", name, {
        clusterIP: `172.30.${i >> 8}.${i & 255}`,
        ports: [{ name: "http", port: 80, protocol: "TCP" }],
      }),
    );
    const endpoints = Array.from({ length: ENDPOINTS }, (_, e) => {
      const k = i * ENDPOINTS + e;
      const base = i === changed && e === 0 ? 202 : 200;
      return { addresses: [`10.${base + (k >> 16)}.${(k >> 8) & 255}.${k & 255}`], nodeName: "node2" };
    });
    out.slices.push(makeSlice("bench", name, "1", endpoints, [{ name: "http", port: 80 }]));
  }
  return out;
}

const count = (steps: readonly MapWriteStep[]) =>
  steps.map((s) => `${s.op} ${s.map} ${s.op === "update" ? s.entries.length : s.keys.length}`).join(", ");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const base = cluster(services);
const after = cluster(services, services >> 1);
const maps = buildMaps("IPv4", base.services, base.slices);
const mapsAfter = buildMaps("IPv4", after.services, after.slices);
const changedServices = new Set([`bench/svc-${String(services >> 1).padStart(5, "0")}`]);
const opts = ebpfOptions("IPv4");

renderEBPF(opts, maps); // warm-up (JIT)
const full: number[] = [];
const partial: number[] = [];
const resync: number[] = [];
for (let r = 0; r < runs; r++) {
  let t0 = performance.now();
  const f = renderEBPF(opts, maps);
  full.push(performance.now() - t0);
  t0 = performance.now();
  const p = renderEBPF(opts, { ...mapsAfter, changedServices }, f.state);
  partial.push(performance.now() - t0);
  t0 = performance.now();
  const again = renderEBPF(opts, mapsAfter, p.state);
  resync.push(performance.now() - t0);
  if (again.steps.length > 0) throw new Error("a full sync over an unchanged cluster wrote something");
  if (r === runs - 1) {
    console.log(`full sync:    ${count(f.steps)}; sizes ${JSON.stringify(f.sizes)}`);
    console.log(`partial sync: ${count(p.steps)}`);
  }
}
console.log(`${services} Services x ${ENDPOINTS} endpoints, ${runs} runs (median, min..max):`);
console.log(
  `  full    ${median(full).toFixed(0)} ms (${Math.min(...full).toFixed(0)}..${Math.max(...full).toFixed(0)})`,
);
console.log(`  full over previous state, nothing changed ${median(resync).toFixed(0)} ms`);
console.log(
  `  partial ${median(partial).toFixed(2)} ms (${Math.min(...partial).toFixed(2)}..${Math.max(...partial).toFixed(2)})`,
);
