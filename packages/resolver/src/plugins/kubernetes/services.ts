import { isIP } from "node:net";
import type { Service } from "kubernetes-types/core/v1.js";
import { joinName } from "../../wire/name.js";
import type { ClusterView } from "./cluster-view.js";
import { clusterIPs, isExternalName, isHeadless } from "./cluster-view.js";
import { endpointHostname, toSubset } from "./endpoints.js";
import type { KubernetesOptions } from "./options.js";
import type { RecordRequest } from "./request.js";

/**
 * One thing a name stands for, before it becomes records (CoreDNS's msg.Service): an address or, for
 * ExternalName, a host name; the port for SRV; and the domain that names it (SRV target, PTR target).
 */
export interface Found {
  host: string;
  port: number;
  ttl: number;
  domain: string;
}

/** `undefined` found with `nameError` means NXDOMAIN; an empty list without it means the name exists. */
export interface FindResult {
  found: Found[];
  nameError: boolean;
}

const exists = (found: Found[] = []): FindResult => ({ found, nameError: false });
const nameError = (): FindResult => ({ found: [], nameError: true });

/** Exposed means allowed by `namespaces` and present in the cluster. */
export function namespaceExposed(view: ClusterView, opts: KubernetesOptions, ns: string): boolean {
  if (opts.namespaces.size > 0 && !opts.namespaces.has(ns)) return false;
  return view.namespace(ns) !== undefined;
}

/** What a parsed request names in the cluster (CoreDNS's Records, without the reverse branch). */
export function findRecords(
  view: ClusterView,
  opts: KubernetesOptions,
  r: RecordRequest,
  zone: string,
): FindResult {
  if (r.podOrSvc === "") return exists();
  if (!namespaceExposed(view, opts, r.namespace)) return nameError();
  return r.podOrSvc === "pod" ? findPods(view, opts, r, zone) : findServices(view, opts, r, zone);
}

function findPods(view: ClusterView, opts: KubernetesOptions, r: RecordRequest, zone: string): FindResult {
  if (opts.podMode === "disabled") return nameError();
  if (r.service === "") return exists();
  const label = r.service;
  // Exactly three dashes and no "--" reads as IPv4; anything else as IPv6 with dashes for colons.
  const ip =
    (label.match(/-/g) ?? []).length === 3 && !label.includes("--")
      ? label.replaceAll("-", ".")
      : label.replaceAll("-", ":");
  const domain = joinName(label, r.namespace, "pod", zone);
  if (opts.podMode === "insecure") {
    return isIP(ip) ? exists([{ host: ip, port: -1, ttl: opts.ttl, domain }]) : nameError();
  }
  const found = view
    .podsByIP(ip)
    .filter((p) => p.metadata?.namespace?.toLowerCase() === r.namespace)
    .map(() => ({ host: ip, port: -1, ttl: opts.ttl, domain }));
  return found.length > 0 ? exists(found) : nameError();
}

function findServices(
  view: ClusterView,
  opts: KubernetesOptions,
  r: RecordRequest,
  zone: string,
): FindResult {
  if (r.service === "") return exists();
  const svc = view.service(r.namespace, r.service);
  if (!svc) return nameError();
  const name = svc.metadata?.name ?? r.service;
  const namespace = svc.metadata?.namespace ?? r.namespace;
  const serviceDomain = joinName(name, namespace, "svc", zone);
  const slices = opts.endpoints ? view.endpointSlices(namespace, name).map(toSubset) : [];

  if (opts.ignoreEmptyService && !isExternalName(svc) && !isHeadless(svc)) {
    if (slices.every((s) => s.addresses.length === 0)) return nameError();
  }

  if (isExternalName(svc)) {
    const target = svc.spec?.externalName ?? "";
    // An IP in externalName is not a CNAME target; CoreDNS serves nothing for it.
    if (r.endpoint || r.port || r.protocol || target === "" || isIP(target)) return nameError();
    return exists([{ host: target, port: -1, ttl: opts.ttl, domain: serviceDomain }]);
  }

  if (isHeadless(svc) || r.endpoint !== "") {
    const found: Found[] = [];
    for (const subset of slices) {
      for (const addr of subset.addresses) {
        const hostname = endpointHostname(addr, opts.endpointPodNames);
        if (r.endpoint !== "" && r.endpoint !== hostname.toLowerCase()) continue;
        for (const p of subset.ports) {
          if (!portMatches(r, p.name, p.protocol)) continue;
          found.push({
            host: addr.ip,
            port: p.port,
            ttl: opts.ttl,
            domain: joinName(hostname, serviceDomain),
          });
        }
      }
    }
    return found.length > 0 ? exists(found) : nameError();
  }

  const found: Found[] = [];
  for (const p of servicePorts(svc)) {
    if (!portMatches(r, p.name, p.protocol)) continue;
    for (const ip of clusterIPs(svc))
      found.push({ host: ip, port: p.port, ttl: opts.ttl, domain: serviceDomain });
  }
  // A ClusterIP Service without ports names nothing, as in CoreDNS.
  return found.length > 0 ? exists(found) : nameError();
}

function servicePorts(svc: Service): { name: string; protocol: string; port: number }[] {
  return (svc.spec?.ports ?? []).map((p) => ({
    name: p.name ?? "",
    protocol: p.protocol ?? "TCP",
    port: p.port,
  }));
}

/** Port and protocol from the query match case-insensitively; an absent one matches anything. */
function portMatches(r: RecordRequest, name: string, protocol: string): boolean {
  return (
    (r.port === "" || r.port === name.toLowerCase()) &&
    (r.protocol === "" || r.protocol === protocol.toLowerCase())
  );
}
