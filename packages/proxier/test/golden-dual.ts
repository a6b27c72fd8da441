// The golden cluster (golden-cluster.ts) made dual-stack for the upstream diff: each IPv4
// address a.b.c.d has a twin fd00:a:b:c::d; most Services are RequireDualStack with a ClusterIP,
// external IPs, LB ingress and source ranges in both families and a slice per family, one is
// single-stack IPv6 and one stays single-stack IPv4, so both proxiers also see a family alone.

import { normalizeIP } from "@switchyard/basics";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { goldenServices, goldenSlices } from "./golden-cluster.js";

/** The IPv6 twin of an IPv4 address: a.b.c.d is fd00:a:b:c::d, in canonical form. */
export function twin(ip: string): string {
  const [a, b, c, d] = ip.split(".");
  const v6 = normalizeIP(`fd00:${a}:${b}:${c}::${d}`);
  if (!v6 || d === undefined) throw new Error(`no IPv6 twin for ${ip}`);
  return v6;
}

/** An IPv4 source range's twin: the /64 that holds the twins of its addresses. */
const twinRange = (cidr: string): string => `${twin(cidr.split("/")[0] ?? "")}/64`;

/** Which Services are not dual-stack, and their one family. */
const singleStack: Record<string, "IPv4" | "IPv6"> = { "ns6/svc6": "IPv4", "ns4/svc4": "IPv6" };
const key = (o: { metadata?: { namespace?: string; name?: string } }) =>
  `${o.metadata?.namespace}/${o.metadata?.name}`;

function withFamilies(svc: Service, clusterIP6: string): Service {
  const only = singleStack[key(svc)];
  const spec = svc.spec ?? {};
  const v4 = spec.clusterIP ?? "";
  const pick = <T>(four: T[], six: T[]): T[] =>
    only === "IPv4" ? four : only === "IPv6" ? six : [...four, ...six];
  const external = spec.externalIPs ?? [];
  const ranges = spec.loadBalancerSourceRanges ?? [];
  const ingress = svc.status?.loadBalancer?.ingress ?? [];
  return {
    ...svc,
    spec: {
      ...spec,
      ipFamilyPolicy: only ? "SingleStack" : "RequireDualStack",
      ipFamilies: pick(["IPv4"], ["IPv6"]),
      clusterIP: only === "IPv6" ? clusterIP6 : v4,
      clusterIPs: pick([v4], [clusterIP6]),
      ...(external.length ? { externalIPs: pick(external, external.map(twin)) } : {}),
      ...(ranges.length ? { loadBalancerSourceRanges: pick(ranges, ranges.map(twinRange)) } : {}),
    },
    ...(svc.status
      ? {
          status: {
            loadBalancer: {
              ingress: pick(
                ingress,
                ingress.map((i) => ({ ...i, ip: twin(i.ip ?? "") })),
              ),
            },
          },
        }
      : {}),
  };
}

/** The Services: ClusterIPs from `clusterIP` (IPv4) and `clusterIP6`, numbered alike. */
export function dualServices(clusterIP: (n: number) => string, clusterIP6: (n: number) => string): Service[] {
  return goldenServices(clusterIP).map((svc) => {
    const n = Number((svc.spec?.clusterIP ?? "").split(".").at(-1));
    return withFamilies(svc, clusterIP6(n));
  });
}

/** A slice per family each Service has, as the slice controller cuts them. */
export function dualSlices(): EndpointSlice[] {
  const out: EndpointSlice[] = [];
  for (const slice of goldenSlices()) {
    const svc = `${slice.metadata?.namespace}/${slice.metadata?.labels?.["kubernetes.io/service-name"]}`;
    if (singleStack[svc] !== "IPv6") out.push(slice);
    if (singleStack[svc] === "IPv4") continue;
    out.push({
      ...slice,
      metadata: { ...slice.metadata, name: `${slice.metadata?.name}6` },
      addressType: "IPv6",
      endpoints: slice.endpoints.map((e) => ({ ...e, addresses: e.addresses.map(twin) })),
    });
  }
  return out;
}
