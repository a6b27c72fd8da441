// One IPVS sync as a pure function: (options, cluster state, previous kernel state) in; the
// ipvsadm, ipset and iptables programs, the kube-ipvs0 addresses and the next state out.
// IPVS mode has no partial sync: every sync computes everything and diffs it.

import { ipFamilyOf } from "@switchyard/basics";
import { compareStrings, type EndpointInfo } from "../model/endpoint.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import { namespacedName } from "../model/service-port-name.js";
import { categorizeEndpoints } from "../model/topology.js";
import { type IPSetMembers, ipsetDiff, ipsetFull } from "./ipset.js";
import { ipvsIPTablesRestore } from "./iptables-rules.js";
import { type IPVSTable, ipvsadmDiff, ipvsadmFull } from "./ipvsadm.js";
import * as N from "./names.js";
import { excluded, type IPVSOptions } from "./options.js";
import { type PortPlan, planServicePort } from "./service-port.js";
import type { VirtualServerEntry } from "./virtual-server.js";
import { vsKey } from "./virtual-server.js";

/** What the kernel holds after a successful sync; the input of the next one. */
export interface IPVSState {
  readonly table: IPVSTable;
  readonly ipsets: IPSetMembers;
  /** Addresses on kube-ipvs0. */
  readonly bound: ReadonlySet<string>;
}

export interface IPVSSyncInput {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
  /** Real servers with connections (realServerName), read from the kernel before the sync. */
  readonly busyRealServers?: ReadonlySet<string>;
}

export interface IPVSSyncResult {
  /** ipvsadm-restore program that builds the resulting table from scratch (starts with -C). */
  readonly ipvsadmFull: string;
  /** ipvsadm-restore commands from the previous state (-A/-E/-D, -a/-e/-d); "" for none. */
  readonly ipvsadmDiff: string;
  /** `ipset restore` program with every set's full contents. */
  readonly ipsetFull: string;
  /** `ipset restore` program with only the changed members (after ensuring the sets). */
  readonly ipsetDiff: string;
  /** `iptables-restore --noflush --counters` input (nat, then filter). */
  readonly iptablesRestore: string;
  /** Addresses kube-ipvs0 should carry, and what to add and remove to get there. */
  readonly bind: {
    readonly addresses: readonly string[];
    readonly add: readonly string[];
    readonly remove: readonly string[];
  };
  readonly state: IPVSState;
  /** Services whose Local policy found no local endpoint (sync_proxy_rules_no_local_endpoints_total). */
  readonly noLocalEndpoints: { readonly internal: number; readonly external: number };
}

export const EMPTY_IPVS_STATE: IPVSState = { table: new Map(), ipsets: new Map(), bound: new Set() };

/**
 * Renders a sync. Apply the ipset program first (the iptables rules reference the sets),
 * then iptables, then the addresses, then the ipvsadm commands; keep `state` only if all of
 * them succeeded, otherwise sync against a state read back from the kernel. Without
 * `previous` (start-up) the diffs assume an empty kernel; pass a state read from the kernel
 * to clean up what an earlier run left.
 */
export function renderIPVS(options: IPVSOptions, input: IPVSSyncInput, previous?: IPVSState): IPVSSyncResult {
  const before = previous ?? EMPTY_IPVS_STATE;
  const plans: PortPlan[] = [];
  const noLocal = { internal: new Set<string>(), external: new Set<string>() };
  for (const key of [...input.services.keys()].sort(compareStrings)) {
    const sp = input.services.get(key);
    if (!sp) continue;
    const all: readonly EndpointInfo[] = input.endpoints.get(key) ?? [];
    const cat = categorizeEndpoints(all, sp, options.nodeName, options.nodeLabels);
    const svc = namespacedName(sp.name.namespace, sp.name.name);
    const plan = planServicePort(options, sp, all, (onlyLocal) => {
      if (!onlyLocal) return cat.clusterEndpoints ?? [];
      if (cat.localEndpoints && cat.localEndpoints.length > 0) return cat.localEndpoints;
      // With no local endpoint, upstream falls back to the cluster ones so that local pods
      // still reach the Service (kubernetes#97081); external replies then go astray.
      if (cat.hasAnyEndpoints && sp.internalPolicyLocal) noLocal.internal.add(svc);
      if (cat.hasAnyEndpoints && sp.externalPolicyLocal) noLocal.external.add(svc);
      return cat.clusterEndpoints ?? [];
    });
    plans.push(plan);
  }

  const desired = new Map<string, VirtualServerEntry>();
  const sets = new Map<string, Set<string>>(N.IPSETS.map((s) => [s.name, new Set<string>()]));
  const bound = new Set<string>();
  const noNodeAccess = plans.flatMap((p) => p.noNodeAccess);
  for (const plan of plans) {
    for (const entry of plan.virtualServers) desired.set(vsKey(entry.vs), entry);
    for (const [base, entry] of plan.ipsetEntries) sets.get(base)?.add(entry);
    for (const ip of plan.bind) bound.add(ip);
  }
  sets.set(N.IPVS_IPS, new Set(bound));

  const diff = ipvsadmDiff(before.table, desired, {
    busy: input.busyRealServers ?? new Set(),
    foreign: (vs) => excluded(options, vs.address) || ipFamilyOf(vs.address) !== options.family,
  });
  const sortedBound = [...bound].sort(compareStrings);
  return {
    ipvsadmFull: ipvsadmFull(diff.next),
    ipvsadmDiff: diff.commands.length === 0 ? "" : `${diff.commands.join("\n")}\n`,
    ipsetFull: ipsetFull(sets, options.family),
    ipsetDiff: ipsetDiff(before.ipsets, sets, options.family),
    iptablesRestore: ipvsIPTablesRestore(options, sets, noNodeAccess),
    bind: {
      addresses: sortedBound,
      add: sortedBound.filter((ip) => !before.bound.has(ip)),
      remove: [...before.bound].filter((ip) => !bound.has(ip)).sort(compareStrings),
    },
    state: { table: diff.next, ipsets: sets, bound },
    noLocalEndpoints: { internal: noLocal.internal.size, external: noLocal.external.size },
  };
}
