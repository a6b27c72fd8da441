// A Service port's part in the maps: what it claims (its frontends and backends, with the values it wants for
// them), brought up to date when the port is rendered again, and taken back when it goes.

import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import { serviceOfPortKey } from "../model/service-port-name.js";
import type { BackendEntry } from "./backends.js";
import type { EBPFOptions } from "./options.js";
import type { Carried, PortRecord } from "./render.js";
import { type BackendWant, planServicePort } from "./service-plan.js";

/** Takes back what the port claimed last time. */
export function releasePort(c: Carried, port: string): void {
  const record = c.ports.get(port);
  if (!record) return;
  c.ports.delete(port);
  const svc = serviceOfPortKey(port);
  const ports = c.portsOfService.get(svc) ?? [];
  const at = ports.indexOf(port);
  if (at >= 0) ports.splice(at, 1);
  if (ports.length === 0) c.portsOfService.delete(svc);
  for (const name of record.frontends) c.frontends.release(name, port);
  for (const b of record.backends) c.backends.claims.release(b.key, port);
  countNoLocal(c, record, -1);
}

/**
 * Renders the port and claims what it needs now, releasing what it claimed last time and needs no more; a port
 * that is gone releases everything. Claims that stay as they were change nothing. A port given the very
 * objects it was planned from, under the same options, is not planned again: the trackers hand over an
 * unchanged Service's port and endpoints as they were, and the records are never changed in place.
 */
export function reclaimPort(
  c: Carried,
  options: EBPFOptions,
  input: { readonly services: ServicePortMap; readonly endpoints: EndpointsMap },
  port: string,
): void {
  const sp = input.services.get(port);
  if (!sp) {
    releasePort(c, port);
    return;
  }
  const endpoints = input.endpoints.get(port);
  const old = c.ports.get(port);
  if (old && old.sp === sp && old.endpoints === endpoints && old.options === options) return;
  const plan = planServicePort(options, sp, endpoints ?? []);
  for (const f of plan.frontends) c.frontends.claim(f.name, port, f);
  const backends: BackendEntry[] = plan.backendNames.map((name, i) =>
    c.backends.claims.claim(name, port, plan.backends[i] as BackendWant),
  );
  const record: PortRecord = {
    sp,
    endpoints,
    options,
    frontends: plan.frontends.map((f) => f.name),
    backends,
    noLocalInternal: plan.noLocalInternal,
    noLocalExternal: plan.noLocalExternal,
  };
  if (old) {
    for (const name of old.frontends) if (!record.frontends.includes(name)) c.frontends.release(name, port);
    const kept = new Set(plan.backendNames);
    for (const b of old.backends) if (!kept.has(b.key)) c.backends.claims.release(b.key, port);
    countNoLocal(c, old, -1);
  } else {
    const svc = serviceOfPortKey(port);
    const ports = c.portsOfService.get(svc);
    if (ports) ports.push(port);
    else c.portsOfService.set(svc, [port]);
  }
  c.ports.set(port, record);
  countNoLocal(c, record, 1);
}

function countNoLocal(c: Carried, record: PortRecord, by: 1 | -1): void {
  if (record.noLocalInternal) c.noLocal.internal += by;
  if (record.noLocalExternal) c.noLocal.external += by;
}
