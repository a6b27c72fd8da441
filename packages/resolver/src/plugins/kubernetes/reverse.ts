import { formatIPv6 } from "@switchyard/basics";
import { joinName } from "../../wire/name.js";
import type { ClusterView } from "./cluster-view.js";
import { endpointHostname, toSubset } from "./endpoints.js";
import type { KubernetesOptions } from "./options.js";
import { namespaceExposed } from "./services.js";

/**
 * The address a reverse name spells (`4.3.2.1.in-addr.arpa.` → `1.2.3.4`, 32 nibbles under `ip6.arpa.`),
 * or undefined when it is not a complete address.
 */
export function addressFromReverse(name: string): string | undefined {
  const lower = name.toLowerCase();
  const v4 = /^((?:\d{1,3}\.){4})in-addr\.arpa\.$/.exec(lower);
  if (v4?.[1]) {
    const octets = v4[1].slice(0, -1).split(".").reverse();
    return octets.every((o) => Number(o) <= 255 && String(Number(o)) === o) ? octets.join(".") : undefined;
  }
  const v6 = /^((?:[0-9a-f]\.){32})ip6\.arpa\.$/.exec(lower);
  if (v6?.[1]) {
    const nibbles = v6[1].replaceAll(".", "").split("").reverse().join("");
    return formatIPv6(Buffer.from(nibbles, "hex"));
  }
  return undefined;
}

/**
 * PTR targets for an address: the Service whose ClusterIP it is, else one name per (endpoint, Service)
 * holding it, duplicates removed. Targets use the primary zone.
 */
export function reverseTargets(view: ClusterView, opts: KubernetesOptions, ip: string): string[] {
  const restricted = opts.namespaces.size > 0;
  for (const svc of view.servicesByClusterIP(ip)) {
    const ns = svc.metadata?.namespace ?? "";
    if (restricted && !namespaceExposed(view, opts, ns)) continue;
    return [joinName(svc.metadata?.name ?? "", ns, "svc", opts.primaryZone)];
  }
  const targets: string[] = [];
  for (const slice of view.endpointSlicesByIP(ip)) {
    const ns = slice.metadata?.namespace ?? "";
    if (restricted && !namespaceExposed(view, opts, ns)) continue;
    const service = slice.metadata?.labels?.["kubernetes.io/service-name"] ?? "";
    for (const addr of toSubset(slice).addresses) {
      if (!sameAddress(addr.ip, ip)) continue;
      const target = joinName(
        endpointHostname(addr, opts.endpointPodNames),
        service,
        ns,
        "svc",
        opts.primaryZone,
      );
      if (!targets.includes(target)) targets.push(target);
    }
  }
  return targets;
}

/** Compares addresses by value, so `fd00::1` and `fd00:0:0::1` match. */
function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  if (!a.includes(":") || !b.includes(":")) return false;
  return expand(a) === expand(b);
}

function expand(ip: string): string {
  const [head = "", tail] = ip.toLowerCase().split("::");
  const h = head === "" ? [] : head.split(":");
  const t = tail === undefined || tail === "" ? [] : tail.split(":");
  const fill = tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill("0");
  return [...h, ...fill, ...t].map((g) => g.padStart(4, "0")).join(":");
}
