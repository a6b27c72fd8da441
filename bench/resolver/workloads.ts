// The workloads: which Corefile variant each runs on, and the dnsperf query file it sends (one
// `name TYPE` per line, shuffled with a fixed seed so both servers get the same order).
import type { ClusterNames } from "./cluster.js";
import { UPSTREAM_ZONE, ZONE } from "./corefiles.js";

export interface Workload {
  id: string;
  title: string;
  cache: boolean;
  /** The rcode nearly every answer should carry; anything else is flagged in the report. */
  expect: "NOERROR" | "NXDOMAIN";
  queries: string[];
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0;
  const rand = () => {
    // xorshift32: deterministic, good enough to mix a query file.
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const svc = (name: string) => `${name}.svc.${ZONE}`;

/** Cluster names that exist: ClusterIP A, headless A (several records) and endpoint A. */
function clusterA(n: ClusterNames): string[] {
  return [
    ...n.clusterIp.map((s) => `${svc(s)} A`),
    ...n.headless.map((s) => `${svc(s)} A`),
    ...n.endpoints.map((s) => `${svc(s)} A`),
  ];
}

/** Names in the cluster zone that do not exist, the kinds a search path produces. */
function missing(n: ClusterNames): string[] {
  const out: string[] = [];
  for (const [i, s] of n.clusterIp.entries()) {
    const ns = n.namespaces[i % n.namespaces.length] as string;
    out.push(`nosuch-${i}.${ns}.svc.${ZONE} A`); // no such Service
    out.push(`${svc(s)}.${ns}.svc.${ZONE} A`); // a search-path expansion of a full name
    out.push(`${s.split(".")[0]}.nosuch-ns-${i}.svc.${ZONE} A`); // no such namespace
  }
  return out;
}

export function workloads(n: ClusterNames): Workload[] {
  const a = clusterA(n);
  // Uncached: the same A names plus SRV for named ports and AAAA (NODATA for these IPv4-only Services).
  const mixed = [
    ...a,
    ...n.clusterIp.map((s) => `_http._tcp.${svc(s)} SRV`),
    ...n.clusterIp.slice(0, Math.ceil(n.clusterIp.length / 4)).map((s) => `${svc(s)} AAAA`),
  ];
  const forwarded = Array.from({ length: 20_000 }, (_, i) => `host-${i}.${UPSTREAM_ZONE} A`);
  return [
    {
      id: "cached",
      title: "cached A, cluster names (`cache 30`)",
      cache: true,
      expect: "NOERROR",
      queries: shuffled(a, 1),
    },
    {
      id: "uncached",
      title: "uncached cluster names (A, SRV, AAAA; no cache)",
      cache: false,
      expect: "NOERROR",
      queries: shuffled(mixed, 2),
    },
    {
      id: "nxdomain",
      title: "NXDOMAIN in the cluster zone (no cache)",
      cache: false,
      expect: "NXDOMAIN",
      queries: shuffled(missing(n), 3),
    },
    {
      id: "nxdomain-cached",
      title: "NXDOMAIN in the cluster zone (`cache 30`)",
      cache: true,
      expect: "NXDOMAIN",
      queries: shuffled(missing(n), 4),
    },
    {
      id: "forward",
      title: "forwarded to the local upstream (no cache)",
      cache: false,
      expect: "NOERROR",
      queries: forwarded,
    },
  ];
}

/**
 * What pods behind kubeadm's Corefile ask, in one query file: Service and endpoint A (headless ones
 * several records, so loadbalance shuffles them), SRV and AAAA for some Services, the NXDOMAINs a
 * `ndots:5` search path produces, and names outside the cluster: forwarded to the upstream once, then
 * answered by `cache` (only they are cached: kubeadm disables caching for cluster.local).
 */
export function kubeadmMix(n: ClusterNames, externalNames: number): string[] {
  const quarter = n.clusterIp.slice(0, Math.ceil(n.clusterIp.length / 4));
  const external = Array.from({ length: externalNames }, (_, i) => `host-${i}.${UPSTREAM_ZONE}`);
  return shuffled(
    [
      ...clusterA(n),
      ...quarter.map((s) => `_http._tcp.${svc(s)} SRV`),
      ...quarter.map((s) => `${svc(s)} AAAA`),
      ...missing(n),
      // A pod in team-0 resolving an outside name walks its search path first.
      ...external.flatMap((name) => [
        `${name}.${n.namespaces[0]}.svc.${ZONE} A`,
        `${name}.svc.${ZONE} A`,
        `${name}.${ZONE} A`,
        `${name} A`,
      ]),
    ],
    5,
  );
}
