// How long renderEBPF takes on N ClusterIP Services x 10 endpoints (default 10000): a full sync from nothing, a
// partial sync after one Service's first endpoint changed, and two full syncs over that state with nothing to
// write: one given the same maps (as the trackers hand over unchanged Services' objects), one given the same
// cluster built again (new objects, equal content). Wall time and CPU time (every thread of the process: the
// garbage collector's helpers too) per sync. Not a test (a timing assertion would only measure the machine);
// run it by hand from the repository root:
//   node --import tsx packages/proxier/test/ebpf/render-timing.ts [services] [runs]
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { MapWriteStep } from "../../src/ebpf/map-store.js";
import { renderEBPF } from "../../src/ebpf/render.js";
import { serviceOfPortKey } from "../../src/model/service-port-name.js";
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
const mapsAfterRebuilt = buildMaps("IPv4", after.services, after.slices);
const changedService = `bench/svc-${String(services >> 1).padStart(5, "0")}`;
const changedServices = new Set([changedService]);
// As the trackers hand them over: the maps copied, the changed Service's entries replaced.
const mapsAfter = {
  services: new Map(maps.services),
  endpoints: new Map(maps.endpoints),
};
for (const [key, sp] of mapsAfterRebuilt.services)
  if (serviceOfPortKey(key) === changedService) mapsAfter.services.set(key, sp);
for (const [key, eps] of mapsAfterRebuilt.endpoints)
  if (serviceOfPortKey(key) === changedService) mapsAfter.endpoints.set(key, eps);
const opts = ebpfOptions("IPv4");

interface Times {
  readonly wall: number[];
  readonly cpu: number[];
}
const times = () => ({ wall: [], cpu: [] }) as Times;
const full = times();
const partial = times();
const resync = times();
const rebuilt = times();

function timed<T>(into: Times, render: () => T): T {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const out = render();
  into.wall.push(performance.now() - t0);
  const cpu = process.cpuUsage(cpu0);
  into.cpu.push((cpu.user + cpu.system) / 1000);
  return out;
}

renderEBPF(opts, maps); // warm-up (JIT)
for (let r = 0; r < runs; r++) {
  const f = timed(full, () => renderEBPF(opts, maps));
  const p = timed(partial, () => renderEBPF(opts, { ...mapsAfter, changedServices }, f.state));
  const again = timed(resync, () => renderEBPF(opts, mapsAfter, p.state));
  const again2 = timed(rebuilt, () => renderEBPF(opts, mapsAfterRebuilt, again.state));
  if (again.steps.length > 0 || again2.steps.length > 0)
    throw new Error("a full sync over an unchanged cluster wrote something");
  if (r === runs - 1) {
    console.log(`full sync:    ${count(f.steps)}; sizes ${JSON.stringify(f.sizes)}`);
    console.log(`partial sync: ${count(p.steps)}`);
  }
}
const row = (what: string, t: Times, digits: number) =>
  `  ${what.padEnd(44)} ${median(t.wall).toFixed(digits)} ms (${Math.min(...t.wall).toFixed(digits)}..` +
  `${Math.max(...t.wall).toFixed(digits)}), CPU ${median(t.cpu).toFixed(digits)} ms`;
console.log(
  `${services} Services x ${ENDPOINTS} endpoints, ${runs} runs (median wall time (min..max), median CPU):`,
);
console.log(row("full from nothing", full, 0));
console.log(row("full, nothing changed, same objects", resync, 0));
console.log(row("full, nothing changed, rebuilt objects", rebuilt, 0));
console.log(row("partial (one Service)", partial, 2));
