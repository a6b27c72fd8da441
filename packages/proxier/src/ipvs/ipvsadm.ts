// The IPVS table as ipvsadm-restore input: a full program, and the commands that move the
// kernel from one table to the next, with kube-proxy's graceful termination of real servers.
import {
  byKey,
  hostPort,
  type RealServer,
  realArgs,
  sameSchedule,
  scheduleArgs,
  serviceArgs,
  type VirtualServer,
  type VirtualServerEntry,
  vsKey,
} from "./virtual-server.js";

export type IPVSTable = ReadonlyMap<string, VirtualServerEntry>;

/** "<vsKey>/<ip:port>": how a real server is named in the busy set and in logs. */
export function realServerName(vs: VirtualServer, rs: Pick<RealServer, "address" | "port">): string {
  return `${vsKey(vs)}/${hostPort(rs.address, rs.port)}`;
}

function sortedEntries(table: IPVSTable): VirtualServerEntry[] {
  return [...table.values()].sort(byKey((e) => vsKey(e.vs)));
}

function sortedReals(entry: VirtualServerEntry): RealServer[] {
  return [...entry.reals.values()].sort(byKey((rs) => hostPort(rs.address, rs.port)));
}

/** A program that clears IPVS and recreates `table` exactly (ipvsadm-restore < text). */
export function ipvsadmFull(table: IPVSTable): string {
  const lines = ["-C"];
  for (const entry of sortedEntries(table)) {
    lines.push(`-A ${serviceArgs(entry.vs)} ${scheduleArgs(entry.vs)}`);
    for (const rs of sortedReals(entry)) lines.push(`-a ${realArgs(entry.vs, rs)}`);
  }
  return `${lines.join("\n")}\n`;
}

export interface DiffContext {
  /**
   * Real servers (realServerName) that still have active or inactive connections, as
   * `ipvsadm -Ln` showed them before this sync. They drain at weight 0 instead of going.
   */
  readonly busy: ReadonlySet<string>;
  /** Virtual servers kube-proxy must leave alone (excluded CIDRs, the other IP family). */
  readonly foreign: (vs: VirtualServer) => boolean;
}

export interface IPVSDiff {
  /** ipvsadm-restore input; empty when nothing changes. */
  readonly commands: readonly string[];
  /** What the kernel holds once the commands ran. */
  readonly next: IPVSTable;
}

/**
 * Commands from `current` to `desired`. A real server that is no longer wanted is deleted
 * at once when it has no connections (or is UDP, which has no graceful close; the kernel's
 * expire_nodest_conn drops its flows), and otherwise set to weight 0 so that schedulers skip
 * it while its connections finish; a later sync deletes it once idle. Upstream re-checks
 * such servers every minute; here every sync is that check. A wanted server found at
 * weight 0 is deleted and re-added, as upstream takes it off its termination list.
 */
export function ipvsadmDiff(current: IPVSTable, desired: IPVSTable, ctx: DiffContext): IPVSDiff {
  const addVS: string[] = [];
  const realOps: string[] = [];
  const deleteVS: string[] = [];
  const next = new Map<string, VirtualServerEntry>();

  for (const want of sortedEntries(desired)) {
    const key = vsKey(want.vs);
    const have = current.get(key);
    if (!have) addVS.push(`-A ${serviceArgs(want.vs)} ${scheduleArgs(want.vs)}`);
    else if (!sameSchedule(have.vs, want.vs))
      addVS.push(`-E ${serviceArgs(want.vs)} ${scheduleArgs(want.vs)}`);
    const reals = new Map<string, RealServer>();
    const haveReals = have?.reals ?? new Map<string, RealServer>();
    for (const rs of sortedReals(want)) {
      const id = hostPort(rs.address, rs.port);
      const old = haveReals.get(id);
      if (old?.weight === 0) realOps.push(`-d ${serviceArgs(want.vs)} -r ${id}`);
      if (!old || old.weight === 0) realOps.push(`-a ${realArgs(want.vs, rs)}`);
      else if (old.weight !== rs.weight) realOps.push(`-e ${realArgs(want.vs, rs)}`);
      reals.set(id, rs);
    }
    for (const old of [...haveReals.values()].sort(byKey((r) => hostPort(r.address, r.port)))) {
      const id = hostPort(old.address, old.port);
      if (want.reals.has(id)) continue;
      const draining = want.vs.protocol !== "UDP" && ctx.busy.has(realServerName(want.vs, old));
      if (!draining) {
        realOps.push(`-d ${serviceArgs(want.vs)} -r ${id}`);
        continue;
      }
      const drained = { ...old, weight: 0 };
      if (old.weight !== 0) realOps.push(`-e ${realArgs(want.vs, drained)}`);
      reals.set(id, drained);
    }
    next.set(key, { vs: want.vs, reals });
  }

  for (const have of sortedEntries(current)) {
    const key = vsKey(have.vs);
    if (desired.has(key)) continue;
    if (ctx.foreign(have.vs)) {
      next.set(key, have);
      continue;
    }
    // Deleting a virtual server takes its real servers with it.
    deleteVS.push(`-D ${serviceArgs(have.vs)}`);
  }
  return { commands: [...addVS, ...realOps, ...deleteVS], next };
}
