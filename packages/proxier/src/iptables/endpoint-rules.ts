// The rules that pick an endpoint (KUBE-SVC/KUBE-SVL) and the per-endpoint KUBE-SEP chains.
import type { EndpointInfo } from "../model/endpoint.js";
import { endpointString } from "../model/endpoint.js";
import type { ServicePortInfo } from "../model/service-port.js";
import { servicePortNameString } from "../model/service-port-name.js";
import { chainLine, probability, quoted } from "./line-buffer.js";
import * as N from "./names.js";
import { commentArgs, type ServicePortContext } from "./service-rules.js";

/** One KUBE-SEP chain per reachable endpoint: hairpin masquerade, then DNAT. */
export function writeEndpointChains(
  ctx: ServicePortContext,
  sp: ServicePortInfo,
  endpoints: readonly EndpointInfo[],
): void {
  const { natChains, natRules } = ctx;
  const name = servicePortNameString(sp.name);
  const proto = sp.protocol.toLowerCase();
  for (const ep of endpoints) {
    const chain = N.endpointChain(sp.name, ep);
    natChains.write(chainLine(chain));
    ctx.activeNATChains.add(chain);
    const head = ["-A", chain, ...commentArgs(ctx, name)];
    // Hairpin: a pod reaching itself through the service needs SNAT.
    natRules.write(head, "-s", ep.ip, "-j", N.KUBE_MARK_MASQ_CHAIN);
    const affinity = sp.stickyMaxAgeSeconds > 0 ? ["-m", "recent", "--name", chain, "--set"] : [];
    natRules.write(
      head,
      affinity,
      "-m",
      proto,
      "-p",
      proto,
      "-j",
      "DNAT",
      "--to-destination",
      endpointString(ep),
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
  if (sp.stickyMaxAgeSeconds > 0) {
    // A client seen recently goes back to the endpoint it used last time.
    for (const ep of endpoints) {
      const epChain = N.endpointChain(sp.name, ep);
      ctx.natRules.write(
        "-A",
        chain,
        commentArgs(ctx, quoted(`${name} -> ${endpointString(ep)}`)),
        "-m",
        "recent",
        "--name",
        epChain,
        "--rcheck",
        "--seconds",
        String(sp.stickyMaxAgeSeconds),
        "--reap",
        "-j",
        epChain,
      );
    }
  }
  // Rule i matches 1/(n-i) of what reaches it, so every endpoint gets 1/n overall.
  endpoints.forEach((ep, i) => {
    const odds =
      i < endpoints.length - 1
        ? ["-m", "statistic", "--mode", "random", "--probability", probability(endpoints.length - i)]
        : [];
    ctx.natRules.write(
      "-A",
      chain,
      commentArgs(ctx, quoted(`${name} -> ${endpointString(ep)}`)),
      odds,
      "-j",
      N.endpointChain(sp.name, ep),
    );
  });
}
