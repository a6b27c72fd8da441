// Compares what the changed claims want with what the maps hold, and plans the writes for what differs: the
// backends first (they get their ids here), then each changed frontend's reverse NAT entry and service entries.

import { type ServiceEntry, scopeName } from "./contents.js";
import type { StepPlan } from "./delta.js";
import { SCOPE_EXTERNAL, SCOPE_INTERNAL } from "./layout.js";
import type { Carried } from "./render.js";
import type { BackendWant, FrontendWant } from "./service-plan.js";

export function writeBackends(c: Carried, plan: StepPlan, fullSync: boolean): void {
  for (const name of c.backends.takeDirty()) {
    const want = c.backends.winner(name);
    if (want) {
      const id = c.backendIds.ensure(name);
      const held = c.held.backends.get(id);
      if (!held || !sameBackend(held, want)) {
        plan.updateBackend(id, want);
        c.held.backends.set(id, want);
      }
      continue;
    }
    const id = c.backendIds.release(name);
    if (id !== undefined && c.held.backends.delete(id)) plan.deleteBackend(id);
  }
  if (!fullSync) return;
  // Live at start-up (an earlier run's) and given to no backend now.
  for (const id of [...c.held.backends.keys()]) {
    if (c.backendIds.keyOf(id) === undefined && c.held.backends.delete(id)) plan.deleteBackend(id);
  }
}

function sameBackend(a: BackendWant, b: BackendWant): boolean {
  return a.address === b.address && a.port === b.port && a.proto === b.proto && a.flags === b.flags;
}

/** Reverse NAT is per address and port: a TCP and a UDP frontend of one address and port share it. */
function revNatKeyOf(frontend: string): string {
  return frontend.slice(0, frontend.lastIndexOf("/"));
}

export function writeFrontends(c: Carried, plan: StepPlan, fullSync: boolean): void {
  const dirty = c.frontends.takeDirty();
  if (fullSync) for (const name of c.held.services.keys()) dirty.add(name);
  writeRevNat(c, plan, usersChanged(c, dirty), fullSync);
  for (const name of dirty) writeServiceEntries(c, plan, name);
}

/** Updates who uses each reverse NAT key; the keys whose users changed. */
function usersChanged(c: Carried, frontends: ReadonlySet<string>): Set<string> {
  const changed = new Set<string>();
  for (const name of frontends) {
    const key = revNatKeyOf(name);
    const use = c.revNatUsers.get(key);
    const want = c.frontends.winner(name);
    if (want && !use?.frontends.has(name)) {
      if (use) use.frontends.add(name);
      else c.revNatUsers.set(key, { address: want.address, port: want.port, frontends: new Set([name]) });
      changed.add(key);
    } else if (!want && use?.frontends.delete(name)) {
      if (use.frontends.size === 0) c.revNatUsers.delete(key);
      changed.add(key);
    }
  }
  return changed;
}

function writeRevNat(c: Carried, plan: StepPlan, keys: ReadonlySet<string>, fullSync: boolean): void {
  for (const key of keys) {
    const use = c.revNatUsers.get(key);
    if (use) {
      const index = c.revNatIndexes.ensure(key);
      if (!c.held.revNat.get(index)) {
        const value = { address: use.address, port: use.port };
        plan.updateRevNat(index, value);
        c.held.revNat.set(index, value);
      }
      continue;
    }
    const index = c.revNatIndexes.release(key);
    if (index !== undefined && c.held.revNat.delete(index)) plan.deleteRevNat(index);
  }
  if (!fullSync) return;
  for (const index of [...c.held.revNat.keys()]) {
    if (c.revNatIndexes.keyOf(index) === undefined && c.held.revNat.delete(index)) plan.deleteRevNat(index);
  }
}

/** One frontend's entries made what its winning claim wants (none when nobody claims it). */
function writeServiceEntries(c: Carried, plan: StepPlan, frontend: string): void {
  const want = c.frontends.winner(frontend);
  const desired = want ? desiredEntries(c, want) : new Map<string, ServiceEntry>();
  const held = c.held.services.get(frontend);
  for (const [name, entry] of desired) {
    const old = held?.get(name)?.value;
    if (old && sameService(old, entry.value)) continue;
    plan.updateService(entry);
    c.held.setService(frontend, name, entry);
  }
  if (!held) return;
  for (const [name, entry] of [...held]) {
    if (desired.has(name)) continue;
    plan.deleteService(entry.key);
    c.held.deleteService(frontend, name);
  }
}

/** Slot 0 and slots 1..n of both scopes, by entry name. */
function desiredEntries(c: Carried, want: FrontendWant): Map<string, ServiceEntry> {
  const revNatIndex = c.revNatIndexes.get(revNatKeyOf(want.name)) ?? 0;
  const out = new Map<string, ServiceEntry>();
  for (const scope of [SCOPE_EXTERNAL, SCOPE_INTERNAL]) {
    const s = want.scopes[scope];
    if (!s) continue;
    if (s.backends.length > 0xffff) throw new Error(`${want.name}: more than 65535 backends`);
    const key = (backendSlot: number) => ({
      address: want.address,
      dport: want.port,
      backendSlot,
      proto: want.proto,
      scope,
    });
    const prefix = `${want.name} ${scopeName(scope)} slot `;
    const head = { backendId: 0, affinityTimeout: s.affinityTimeout, count: s.backends.length, revNatIndex };
    out.set(`${prefix}0`, { key: key(0), value: { ...head, flags: s.flags } });
    s.backends.forEach((backend, i) => {
      const backendId = c.backendIds.get(backend);
      if (backendId === undefined) throw new Error(`${want.name}: backend ${backend} has no id`);
      const value = { backendId, affinityTimeout: 0, count: 0, revNatIndex, flags: 0 };
      out.set(`${prefix}${i + 1}`, { key: key(i + 1), value });
    });
  }
  return out;
}

function sameService(a: ServiceEntry["value"], b: ServiceEntry["value"]): boolean {
  return (
    a.backendId === b.backendId &&
    a.count === b.count &&
    a.revNatIndex === b.revNatIndex &&
    a.flags === b.flags &&
    a.affinityTimeout === b.affinityTimeout
  );
}
