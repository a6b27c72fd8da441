// One iptables sync as a pure function: (cluster state, previous rendered state) in, the
// iptables-restore --noflush input and the next state out. Running it is the caller's job.

import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import { namespacedName } from "../model/service-port-name.js";
import { sortedKeys } from "../util/sorted-keys.js";
import { chainLine, LineBuffer, RecordingSink } from "./line-buffer.js";
import { DEFAULT_SYNC_PERIOD_MS, type IPTablesOptions } from "./options.js";
import { replayServicePort, type ServicePortRecord } from "./service-record.js";
import { writeServicePort } from "./service-rules.js";
import { type FixedRule, fixedRules } from "./skeleton.js";
import { staleChains } from "./stale-chains.js";

/** Above this many endpoints, rules lose their per-endpoint comments and cleanup slows down. */
export const LARGE_CLUSTER_ENDPOINTS_THRESHOLD = 1000;

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

/** The restore input being written, in the sections it is assembled from. */
interface RestoreBuffers {
  readonly filterChains: LineBuffer;
  readonly filterRules: LineBuffer;
  // The top-level nat chains (KUBE-SERVICES, KUBE-NODEPORTS, ...) apart from the per-service
  // ones, so a partial sync can leave them out when their content did not change.
  readonly natTopChains: LineBuffer;
  readonly natTopRules: LineBuffer;
  readonly natChains: LineBuffer;
  readonly natRules: LineBuffer;
}

export function renderIPTables(
  options: IPTablesOptions,
  input: IPTablesSyncInput,
  previous?: IPTablesState,
): IPTablesSyncResult {
  const fullSync = previous === undefined || input.changedServices === undefined;
  const out: RestoreBuffers = {
    filterChains: new LineBuffer(),
    filterRules: new LineBuffer(),
    natTopChains: new LineBuffer(),
    natTopRules: new LineBuffer(),
    natChains: new LineBuffer(),
    natRules: new LineBuffer(),
  };
  const fixed = fixedRules(options);
  for (const chain of fixed.filterChains) out.filterChains.write(chainLine(chain));
  for (const chain of fixed.natChains) out.natTopChains.write(chainLine(chain));
  writeFixedRules(out.filterRules, fixed.filterHead);
  writeFixedRules(out.natTopRules, fixed.natHead);

  let totalEndpoints = 0;
  for (const key of input.services.keys()) totalEndpoints += input.endpoints.get(key)?.length ?? 0;
  const largeClusterMode = totalEndpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;
  const ports = writeServicePorts(options, input, previous, out, { fullSync, largeClusterMode });
  const cleanup = writeStaleChainCleanup(options, input, previous, out, ports.servicePorts, largeClusterMode);

  writeFixedRules(out.natTopRules, fixed.natTail);
  writeFixedRules(out.filterRules, fixed.filterTail);

  // Every top-level chain is rewritten by every sync upstream. A partial sync here leaves out
  // the filter table and the top-level nat chains when their text equals what the previous
  // sync wrote: the kernel ends up the same, and iptables-restore gets a few lines instead of
  // a KUBE-SERVICES of every Service (143 KiB at 1k Services) per endpoint change.
  const topText = {
    filter: out.filterChains.text + out.filterRules.text,
    nat: out.natTopChains.text + out.natTopRules.text,
  };
  const keepFilter = fullSync || previous?.topText.filter !== topText.filter;
  const keepNatTop = fullSync || previous?.topText.nat !== topText.nat;
  const restoreChunks = restoreInput(out, topText.filter, keepFilter, keepNatTop);
  let restore: string | undefined;
  const { servicePorts, noLocalEndpoints, sortedKeys: keys } = ports;
  const { leftoverChains } = cleanup;
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
      filter: keepFilter ? out.filterRules.length : 0,
      nat: out.natRules.length + (keepNatTop ? out.natTopRules.length : 0),
    },
    state: {
      get natChains() {
        return presentChains(servicePorts, leftoverChains);
      },
      leftoverChains,
      topText,
      lastCleanup: cleanup.lastCleanup,
      servicePorts,
      largeClusterMode,
      sortedKeys: keys,
    },
  };
}

function writeFixedRules(sink: LineBuffer, rules: readonly FixedRule[]): void {
  for (const rule of rules) sink.write("-A", rule.chain, rule.args);
}

interface ServicePortsWritten {
  readonly servicePorts: Map<string, ServicePortRecord>;
  readonly noLocalEndpoints: { internal: number; external: number };
  readonly sortedKeys: readonly string[];
}

/**
 * Writes every Service port, or replays what it wrote last time when neither it nor the mode
 * changed. An unchanged port that cannot be replayed is rebuilt with its own chains written
 * to a throw-away buffer: the kernel holds them already.
 */
function writeServicePorts(
  options: IPTablesOptions,
  input: IPTablesSyncInput,
  previous: IPTablesState | undefined,
  out: RestoreBuffers,
  sync: { readonly fullSync: boolean; readonly largeClusterMode: boolean },
): ServicePortsWritten {
  const { fullSync, largeClusterMode } = sync;
  const skipped = { natChains: new LineBuffer(), natRules: new LineBuffer() };
  const noLocalEndpoints = { internal: 0, external: 0 };
  const servicePorts = new Map<string, ServicePortRecord>();
  const replayable =
    input.replay !== false && previous?.largeClusterMode === largeClusterMode
      ? previous.servicePorts
      : undefined;
  const replayCtx = { filterRules: out.filterRules, topNatRules: out.natTopRules };
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
      const filter = new RecordingSink(out.filterRules);
      const top = new RecordingSink(out.natTopRules);
      const chains: string[] = [];
      const collect = { add: (chain: string) => chains.push(chain) };
      const outcome = writeServicePort(
        {
          options,
          filterRules: filter,
          natChains: unchanged ? skipped.natChains : out.natChains,
          natRules: unchanged ? skipped.natRules : out.natRules,
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
  return { servicePorts, noLocalEndpoints, sortedKeys: keys };
}

/**
 * Deletes the chains no Service port wrote. In large clusters this happens at most once per
 * sync period (unreferenced chains do no harm meanwhile, and upstream lists the table only
 * that often); the chains left meanwhile are returned.
 */
function writeStaleChainCleanup(
  options: IPTablesOptions,
  input: IPTablesSyncInput,
  previous: IPTablesState | undefined,
  out: RestoreBuffers,
  servicePorts: ReadonlyMap<string, ServicePortRecord>,
  largeClusterMode: boolean,
): { readonly leftoverChains: readonly string[]; readonly lastCleanup: number } {
  const lastCleanup = previous?.lastCleanup ?? Number.NEGATIVE_INFINITY;
  const syncPeriod = options.syncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS;
  const stale = staleChains(servicePorts, previous, input.existingNATChains);
  if (largeClusterMode && input.now - lastCleanup <= syncPeriod)
    return { leftoverChains: stale, lastCleanup };
  for (const chain of stale) {
    // A chain line flushes the chain, which must be empty before "-X" may delete it.
    out.natChains.write(chainLine(chain));
    out.natRules.write("-X", chain);
  }
  return { leftoverChains: [], lastCleanup: input.now };
}

// In pieces: at 10k Services the input is 31 MiB, and joining it only to pipe it cost two copies.
function restoreInput(
  out: RestoreBuffers,
  filterText: string,
  keepFilter: boolean,
  keepNatTop: boolean,
): (string | Buffer)[] {
  return [
    ...(keepFilter ? ["*filter\n", filterText, "COMMIT\n"] : []),
    "*nat\n",
    ...(keepNatTop ? out.natTopChains.chunks : []),
    ...out.natChains.chunks,
    ...(keepNatTop ? out.natTopRules.chunks : []),
    ...out.natRules.chunks,
    "COMMIT\n",
  ];
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
