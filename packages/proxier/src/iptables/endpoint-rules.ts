// The rules that pick an endpoint (KUBE-SVC/KUBE-SVL) and the per-endpoint KUBE-SEP chains.
import type { EndpointInfo } from "../model/endpoint.js";
import { endpointString } from "../model/endpoint.js";
import type { ServicePortInfo } from "../model/service-port.js";
import { servicePortNameString } from "../model/service-port-name.js";
import { chainLine, probability, quoted } from "./line-buffer.js";
import * as N from "./names.js";
import type { ServicePortContext } from "./service-port-context.js";

// These two functions write four of every five rules of a large cluster, so they build each
// line with one template instead of argument lists (half the render time at 10k Services).

/** One KUBE-SEP chain per reachable endpoint: hairpin masquerade, then DNAT. */
export function writeEndpointChains(
  ctx: ServicePortContext,
  sp: ServicePortInfo,
  endpoints: readonly EndpointInfo[],
): void {
  const { natChains, natRules } = ctx;
  const proto = sp.protocol.toLowerCase();
  const comment = ctx.largeClusterMode ? "" : ` -m comment --comment ${servicePortNameString(sp.name)}`;
  const sticky = sp.stickyMaxAgeSeconds > 0;
  for (const ep of endpoints) {
    const chain = N.endpointChain(sp.name, ep);
    natChains.line(chainLine(chain));
    ctx.activeNATChains.add(chain);
    // Hairpin: a pod reaching itself through the service needs SNAT.
    natRules.line(`-A ${chain}${comment} -s ${ep.ip} -j ${N.KUBE_MARK_MASQ_CHAIN}`);
    const affinity = sticky ? ` -m recent --name ${chain} --set` : "";
    natRules.line(
      `-A ${chain}${comment}${affinity} -m ${proto} -p ${proto} -j DNAT --to-destination ${endpointString(ep)}`,
    );
  }
}

/** Affinity rules first, then one random-probability rule per endpoint. */
export function writeServiceToEndpointRules(
  ctx: ServicePortContext,
  sp: ServicePortInfo,
  chain: string,
  endpoints: readonly EndpointInfo[],
): void {
  const name = servicePortNameString(sp.name);
  const comment = (ep: EndpointInfo) =>
    ctx.largeClusterMode ? "" : ` -m comment --comment ${quoted(`${name} -> ${endpointString(ep)}`)}`;
  if (sp.stickyMaxAgeSeconds > 0) {
    // A client seen recently goes back to the endpoint it used last time.
    for (const ep of endpoints) {
      const epChain = N.endpointChain(sp.name, ep);
      ctx.natRules.line(
        `-A ${chain}${comment(ep)} -m recent --name ${epChain} --rcheck --seconds ${sp.stickyMaxAgeSeconds} --reap -j ${epChain}`,
      );
    }
  }
  // Rule i matches 1/(n-i) of what reaches it, so every endpoint gets 1/n overall.
  const n = endpoints.length;
  for (let i = 0; i < n; i++) {
    const ep = endpoints[i] as EndpointInfo;
    const odds = i < n - 1 ? ` -m statistic --mode random --probability ${probability(n - i)}` : "";
    ctx.natRules.line(`-A ${chain}${comment(ep)}${odds} -j ${N.endpointChain(sp.name, ep)}`);
  }
}
