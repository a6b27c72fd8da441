// One iptables sync as a pure function: (cluster state, previous rendered state) in, the
// iptables-restore --noflush input and the next state out. Running it is the caller's job.

import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import { namespacedName } from "../model/service-port-name.js";
import { sortedKeys } from "../util/sorted-keys.js";
import { chainLine, LineBuffer, RecordingSink } from "./line-buffer.js";
import * as N from "./names.js";
import {
  DEFAULT_SYNC_PERIOD_MS,
  type IPTablesOptions,
  localhostNodePortsEnabled,
  masqueradeMark,
} from "./options.js";
import { replayServicePort, type ServicePortRecord } from "./service-record.js";
import { writeServicePort } from "./service-rules.js";
import { FILTER_TOP_CHAINS, NAT_TOP_CHAINS } from "./skeleton.js";
import { staleChains } from "./stale-chains.js";

/** Above this many endpoints, rules lose their per-endpoint comments and cleanup slows down. */
export const LARGE_CLUSTER_ENDPOINTS_THRESHOLD = 1000;

/** The nfacct counter that counts INVALID packets dropped in KUBE-FORWARD. */
export const CT_STATE_INVALID_NFACCT = "ct_state_invalid_dropped_pkts";

/** What the nat table holds after a successful sync; the input of the next one. */
export interface IPTablesState {
  /** Per-service nat chains present in the kernel (active, and stale ones not yet deleted). */
  readonly natChains: ReadonlySet<string>;
  /** Stale chains whose deletion was put off (large-cluster mode). */
  readonly leftoverChains: readonly string[];
  /** What the filter table and the top-level nat chains hold, as restore lines. */
  readonly topText: { readonly filter: string; readonly nat: string };
  /** ms timestamp of the last sync that deleted stale chains. */
  readonly lastCleanup: number;
  /** Per service port key, what it wrote; replayed by partial syncs if unchanged. */
  readonly servicePorts: ReadonlyMap<string, ServicePortRecord>;
  /** The mode the records were written in; they are only replayed in the same mode. */
  readonly largeClusterMode: boolean;
  /** The service port keys in the order they were written (see sortedKeys). */
  readonly sortedKeys: readonly string[];
}

export interface IPTablesSyncInput {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
  /**
   * "ns/name" of Services whose Service or endpoints changed since the previous successful
   * sync. Undefined forces a full sync (start-up, after a failure, node label change, canary gone).
   */
  readonly changedServices?: ReadonlySet<string>;
  /** Injected clock, ms. */
  readonly now: number;
  /** false: rebuild unchanged Services' rules instead of replaying them (a check for tests). */
  readonly replay?: boolean;
  /** On the first sync, the nat chains iptables-save found (left by an earlier run). */
  readonly existingNATChains?: readonly string[];
}

export interface IPTablesSyncResult {
  /** Input for `iptables-restore --noflush --counters` (or ip6tables-restore). */
  readonly restore: string;
  /** The same input in pieces, to pipe without joining it. */
  readonly restoreChunks: readonly (string | Buffer)[];
  readonly state: IPTablesState;
  readonly fullSync: boolean;
  readonly largeClusterMode: boolean;
  /** Services whose Local policy found no local endpoint (sync_proxy_rules_no_local_endpoints_total). */
  readonly noLocalEndpoints: { readonly internal: number; readonly external: number };
  /** Rules written this sync per table (sync_proxy_rules_iptables_last). */
  readonly rulesWritten: { readonly filter: number; readonly nat: number };
}

export function renderIPTables(
  options: IPTablesOptions,
  input: IPTablesSyncInput,
  previous?: IPTablesState,
): IPTablesSyncResult {
  const fullSync = previous === undefined || input.changedServices === undefined;
  const mark = masqueradeMark(options);
  const filterChains = new LineBuffer();
  const filterRules = new LineBuffer();
  // The top-level nat chains (KUBE-SERVICES, KUBE-NODEPORTS, ...) apart from the per-service
  // ones, so a partial sync can leave them out when their content did not change.
  const natTopChains = new LineBuffer();
  const natTopRules = new LineBuffer();
  const natChains = new LineBuffer();
  const natRules = new LineBuffer();
  const skipped = { natChains: new LineBuffer(), natRules: new LineBuffer() };

  for (const chain of FILTER_TOP_CHAINS) filterChains.write(chainLine(chain));
  for (const chain of NAT_TOP_CHAINS) natTopChains.write(chainLine(chain));

  natTopRules.write(
    "-A",
    N.KUBE_POSTROUTING_CHAIN,
    "-m",
    "mark",
    "!",
    "--mark",
    `${mark}/${mark}`,
    "-j",
    "RETURN",
  );
  // Clear the mark so a packet that traverses the stack again is not masqueraded twice.
  natTopRules.write("-A", N.KUBE_POSTROUTING_CHAIN, "-j", "MARK", "--xor-mark", mark);
  natTopRules.write(
    "-A",
    N.KUBE_POSTROUTING_CHAIN,
    "-m",
    "comment",
    "--comment",
    '"kubernetes service traffic requiring SNAT"',
    "-j",
    "MASQUERADE",
    options.randomFully === false ? [] : ["--random-fully"],
  );
  natTopRules.write("-A", N.KUBE_MARK_MASQ_CHAIN, "-j", "MARK", "--or-mark", mark);

  const localhostNodePorts = localhostNodePortsEnabled(options);
  if (localhostNodePorts) {
    // route_localnet makes 127/8 routable, which would let others reach the node's
    // localhost services; kubelet writes the same rule, so it must stay byte-compatible.
    filterChains.write(chainLine(N.KUBELET_FIREWALL_CHAIN));
    filterRules.write(
      "-A",
      N.KUBELET_FIREWALL_CHAIN,
      "-m",
      "comment",
      "--comment",
      '"block incoming localnet connections"',
      "-d",
      "127.0.0.0/8",
      "!",
      "-s",
      "127.0.0.0/8",
      "-m",
      "conntrack",
      "!",
      "--ctstate",
      "RELATED,ESTABLISHED,DNAT",
      "-j",
      "DROP",
    );
  }

  let totalEndpoints = 0;
  for (const key of input.services.keys()) totalEndpoints += input.endpoints.get(key)?.length ?? 0;
  const largeClusterMode = totalEndpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;

  const noLocalEndpoints = { internal: 0, external: 0 };
  const servicePorts = new Map<string, ServicePortRecord>();
  const replayable =
    input.replay !== false && previous?.largeClusterMode === largeClusterMode
      ? previous.servicePorts
      : undefined;
  const replayCtx = { filterRules, topNatRules: natTopRules };
  const keys = sortedKeys(input.services, previous?.sortedKeys);
  for (const key of keys) {
    const sp = input.services.get(key);
    if (!sp) continue;
    const unchanged =
      !fullSync && !(input.changedServices?.has(namespacedName(sp.name.namespace, sp.name.name)) ?? true);
    const held = unchanged ? replayable?.get(key) : undefined;
    let record: ServicePortRecord;
    if (held) {
      replayServicePort(replayCtx, held);
      record = held;
    } else {
      const filter = new RecordingSink(filterRules);
      const top = new RecordingSink(natTopRules);
      const chains: string[] = [];
      const collect = { add: (chain: string) => chains.push(chain) };
      const outcome = writeServicePort(
        {
          options,
          filterRules: filter,
          natChains: unchanged ? skipped.natChains : natChains,
          natRules: unchanged ? skipped.natRules : natRules,
          topNatRules: top,
          activeNATChains: collect,
          largeClusterMode,
        },
        sp,
        input.endpoints.get(key) ?? [],
      );
      record = { ...outcome, filterLines: filter.recorded, topNatLines: top.recorded, chains };
    }
    servicePorts.set(key, record);
    if (record.noLocalInternal) noLocalEndpoints.internal++;
    if (record.noLocalExternal) noLocalEndpoints.external++;
  }

  // Stale chains are deleted at most once per sync period in large clusters (unreferenced
  // chains do no harm meanwhile, and upstream lists the table only that often).
  let lastCleanup = previous?.lastCleanup ?? Number.NEGATIVE_INFINITY;
  const syncPeriod = options.syncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS;
  const stale = staleChains(servicePorts, previous, input.existingNATChains);
  const cleanup = !largeClusterMode || input.now - lastCleanup > syncPeriod;
  if (cleanup) {
    for (const chain of stale) {
      // A chain line flushes the chain, which must be empty before "-X" may delete it.
      natChains.write(chainLine(chain));
      natRules.write("-X", chain);
    }
    lastCleanup = input.now;
  }

  writeNodePortsJump(options, natTopRules, localhostNodePorts);

  if (!options.conntrackTCPLiberal) {
    // Without nf_conntrack_tcp_be_liberal, an out-of-window packet is INVALID and would be
    // passed on un-NATed, so the endpoint answers with a reset (kubernetes#74839).
    filterRules.write(
      "-A",
      N.KUBE_FORWARD_CHAIN,
      "-m",
      "conntrack",
      "--ctstate",
      "INVALID",
      options.nfacctCounters?.ctStateInvalidDropped
        ? ["-m", "nfacct", "--nfacct-name", CT_STATE_INVALID_NFACCT]
        : [],
      "-j",
      "DROP",
    );
  }
  // Forward what we marked for masquerading, even when the FORWARD policy is DROP.
  filterRules.write(
    "-A",
    N.KUBE_FORWARD_CHAIN,
    "-m",
    "comment",
    "--comment",
    '"kubernetes forwarding rules"',
    "-m",
    "mark",
    "--mark",
    `${mark}/${mark}`,
    "-j",
    "ACCEPT",
  );
  filterRules.write(
    "-A",
    N.KUBE_FORWARD_CHAIN,
    "-m",
    "comment",
    "--comment",
    '"kubernetes forwarding conntrack rule"',
    "-m",
    "conntrack",
    "--ctstate",
    "RELATED,ESTABLISHED",
    "-j",
    "ACCEPT",
  );

  // Every top-level chain is rewritten by every sync upstream. A partial sync here leaves out
  // the filter table and the top-level nat chains when their text equals what the previous
  // sync wrote: the kernel ends up the same, and iptables-restore gets a few lines instead of
  // a KUBE-SERVICES of every Service (143 KiB at 1k Services) per endpoint change.
  const topText = {
    filter: filterChains.text + filterRules.text,
    nat: natTopChains.text + natTopRules.text,
  };
  const keepFilter = fullSync || previous?.topText.filter !== topText.filter;
  const keepNatTop = fullSync || previous?.topText.nat !== topText.nat;
  // In pieces: at 10k Services the input is 31 MiB, and joining it only to pipe it cost two copies.
  const restoreChunks = [
    ...(keepFilter ? ["*filter\n", topText.filter, "COMMIT\n"] : []),
    "*nat\n",
    ...(keepNatTop ? natTopChains.chunks : []),
    ...natChains.chunks,
    ...(keepNatTop ? natTopRules.chunks : []),
    ...natRules.chunks,
    "COMMIT\n",
  ];
  let restore: string | undefined;
  const leftoverChains = cleanup ? [] : stale;
  return {
    get restore() {
      restore ??= restoreChunks.map((c) => (typeof c === "string" ? c : c.toString("utf8"))).join("");
      return restore;
    },
    restoreChunks,
    fullSync,
    largeClusterMode,
    noLocalEndpoints,
    rulesWritten: {
      filter: keepFilter ? filterRules.length : 0,
      nat: natRules.length + (keepNatTop ? natTopRules.length : 0),
    },
    state: {
      get natChains() {
        return presentChains(servicePorts, leftoverChains);
      },
      leftoverChains,
      topText,
      lastCleanup,
      servicePorts,
      largeClusterMode,
      sortedKeys: keys,
    },
  };
}

/** Every per-service chain the kernel holds after a sync: the ports' and the leftovers. */
function presentChains(
  records: ReadonlyMap<string, ServicePortRecord>,
  leftovers: readonly string[],
): Set<string> {
  const out = new Set(leftovers);
  for (const record of records.values()) for (const chain of record.chains) out.add(chain);
  return out;
}

/** The tail call into KUBE-NODEPORTS; it must stay the last rule of KUBE-SERVICES. */
function writeNodePortsJump(
  options: IPTablesOptions,
  natRules: LineBuffer,
  localhostNodePorts: boolean,
): void {
  const comment = [
    "-m",
    "comment",
    "--comment",
    '"kubernetes service nodeports; NOTE: this must be the last rule in this chain"',
  ];
  if (options.nodePortAddresses === "all") {
    const destinations = ["-m", "addrtype", "--dst-type", "LOCAL"];
    // Localhost NodePorts never work on IPv6, and on IPv4 only with route_localnet.
    if (options.family === "IPv6") destinations.push("!", "-d", "::1/128");
    else if (!localhostNodePorts) destinations.push("!", "-d", "127.0.0.0/8");
    natRules.write("-A", N.KUBE_SERVICES_CHAIN, comment, destinations, "-j", N.KUBE_NODEPORTS_CHAIN);
    return;
  }
  for (const ip of options.nodePortAddresses) {
    const loopback = ip.startsWith("127.") || ip === "::1";
    if (loopback && !localhostNodePorts) continue;
    natRules.write("-A", N.KUBE_SERVICES_CHAIN, comment, "-d", ip, "-j", N.KUBE_NODEPORTS_CHAIN);
  }
}
