// Compares what the changed frontend claims want with what the maps hold, and plans the writes for what
// differs: each changed frontend's service entries, once the backends and reverse NAT entries they name have
// their numbers (backends.ts, rev-nat.ts). `startUp` marks the first sync over live maps: it also deletes what
// an earlier run left and nobody claims. Later syncs need no such sweep: everything held was claimed when
// written, and giving up a claim makes its key dirty.

import type { BackendEntry } from "./backends.js";
import type { Claim } from "./claims.js";
import { addressBytes } from "./codec.js";
import type { ServiceKeyRecord } from "./contents.js";
import type { FrontendScopeKey, StepPlan } from "./delta.js";
import type { HeldFrontend, HeldScope } from "./held.js";
import { serviceFlags } from "./layout.js";
import type { Carried } from "./render.js";
import type { FrontendWant, ScopeWant } from "./service-plan.js";

export function writeFrontends(c: Carried, plan: StepPlan, startUp: boolean): void {
  const changed = c.frontends.takeDirty().map((entry) => ({ entry, winner: c.frontends.winner(entry) }));
  for (const { entry, winner } of changed) c.revNat.use(entry.key, winner?.value);
  c.revNat.write(plan);
  for (const { entry, winner } of changed) {
    const next = winner && heldFormOf(c, winner);
    const from = c.held.frontend(entry.key)?.revNatIndex;
    c.sourceRanges.write(plan, from, next?.revNatIndex, winner?.value.sourceRanges ?? []);
    writeServiceEntries(c, plan, entry.key, next);
    c.frontends.forget(entry);
  }
  // Live at start-up under frontends nobody claims.
  if (startUp) {
    for (const name of c.held.leftFrontends()) writeServiceEntries(c, plan, name, undefined);
    c.sourceRanges.sweep(plan);
  }
}

/** One frontend's entries made what its winning claim wants (`next`; undefined when nobody claims it). */
function writeServiceEntries(
  c: Carried,
  plan: StepPlan,
  frontend: string,
  next: HeldFrontend | undefined,
): void {
  // Keys live at start-up hold values not known: every entry wanted is written, the others deleted.
  const unknown = c.held.takeUnknown(frontend);
  const held = unknown ? undefined : c.held.frontend(frontend);
  const f = next ?? held;
  if (f) {
    const address = addressBytes(f.address, c.family, "lb_key.address");
    const scopes = Math.max(next?.scopes.length ?? 0, held?.scopes.length ?? 0);
    // A scope only one of them has is written or deleted whole; delta.ts orders the two scopes' slot 0 writes.
    for (let scope = 0; scope < scopes; scope++) {
      writeScope(plan, { address, dport: f.port, proto: f.proto, scope }, held, next);
    }
  }
  for (const key of unknown ?? []) if (!wants(next, key)) deleteKey(c, plan, key);
  c.held.setFrontend(frontend, next);
}

/**
 * One scope's entries made what `next` wants, given what `held` says they hold: each slot written only if its
 * value differs, slots beyond the new count deleted, and every entry of a scope `next` no longer has.
 */
function writeScope(
  plan: StepPlan,
  key: FrontendScopeKey,
  held: HeldFrontend | undefined,
  next: HeldFrontend | undefined,
): void {
  const had = held?.scopes[key.scope];
  const want = next?.scopes[key.scope];
  const hadIds = had?.backendIds ?? [];
  const wantIds = want?.backendIds ?? [];
  // Every entry carries the reverse NAT index: a new one rewrites them all.
  const sameRevNat = held !== undefined && held.revNatIndex === next?.revNatIndex;
  if (next && want) {
    const revNatIndex = next.revNatIndex;
    for (let i = 0; i < wantIds.length; i++) {
      const backendId = wantIds[i] ?? 0;
      if (sameRevNat && hadIds[i] === backendId) continue;
      plan.updateService(key, i + 1, { backendId, affinityTimeout: 0, count: 0, revNatIndex, flags: 0 });
    }
    if (!(sameRevNat && had && sameHead(had, want))) {
      const { flags, affinityTimeout } = want;
      plan.updateService(key, 0, {
        backendId: 0,
        affinityTimeout,
        count: wantIds.length,
        revNatIndex,
        flags,
      });
    }
  } else if (had) plan.deleteService(key, 0);
  for (let slot = wantIds.length + 1; slot <= hadIds.length; slot++) plan.deleteService(key, slot);
}

function sameHead(a: HeldScope, b: HeldScope): boolean {
  return (
    a.flags === b.flags &&
    a.affinityTimeout === b.affinityTimeout &&
    a.backendIds.length === b.backendIds.length
  );
}

/** Whether `next` has an entry under a key found live. */
function wants(next: HeldFrontend | undefined, key: ServiceKeyRecord): boolean {
  const scope = next?.scopes[key.scope];
  return scope !== undefined && key.backendSlot <= scope.backendIds.length;
}

function deleteKey(c: Carried, plan: StepPlan, key: ServiceKeyRecord): void {
  const address = addressBytes(key.address, c.family, "lb_key.address");
  plan.deleteService({ address, dport: key.dport, proto: key.proto, scope: key.scope }, key.backendSlot);
}

/** What the winning claim wants, in the form the maps are held in: backends as ids. */
function heldFormOf(c: Carried, winner: Claim<FrontendWant>): HeldFrontend {
  const want = winner.value;
  // The winning port's record has its backends' entries in the order the scopes count in: no lookup by name.
  const entries = c.ports.get(winner.port)?.backends ?? [];
  const [external, internal] = want.scopes;
  const externalIds = backendIdsOf(want.name, external, entries);
  const externalScope = heldScope(external, externalIds);
  // The scopes of a frontend often balance over one list (a ClusterIP's are one object).
  const sameList = internal.backendIndexes === external.backendIndexes;
  const internalScope =
    internal === external
      ? externalScope
      : heldScope(internal, sameList ? externalIds : backendIdsOf(want.name, internal, entries));
  const scopes = sameHeldScope(externalScope, internalScope)
    ? [externalScope]
    : [{ ...externalScope, flags: externalScope.flags | serviceFlags.TWO_SCOPES }, internalScope];
  return {
    address: want.address,
    port: want.port,
    proto: want.proto,
    revNatIndex: c.revNat.indexOf(want.name),
    scopes,
  };
}

/** Whether the node's sockets would meet exactly what traffic from outside meets: one scope serves both. */
function sameHeldScope(a: HeldScope, b: HeldScope): boolean {
  if (a === b) return true;
  if (a.flags !== b.flags || a.affinityTimeout !== b.affinityTimeout) return false;
  if (a.backendIds.length !== b.backendIds.length) return false;
  return a.backendIds.every((id, i) => id === b.backendIds[i]);
}

function heldScope(s: ScopeWant, backendIds: readonly number[]): HeldScope {
  return { flags: s.flags, affinityTimeout: s.affinityTimeout, backendIds };
}

function backendIdsOf(frontend: string, s: ScopeWant, entries: readonly BackendEntry[]): number[] {
  if (s.backends.length > 0xffff) throw new Error(`${frontend}: more than 65535 backends`);
  return s.backendIndexes.map((index, i) => {
    const id = entries[index]?.id ?? 0;
    if (id === 0) throw new Error(`${frontend}: backend ${s.backends[i]} has no id`);
    return id;
  });
}
