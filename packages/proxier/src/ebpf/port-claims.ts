// A Service port's part in the maps: what it claims (its frontends and backends, with the values it wants for
// them) and how to take that back when the port changes or goes.

import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import { serviceOfPortKey } from "../model/service-port-name.js";
import type { EBPFOptions } from "./options.js";
import type { Carried } from "./render.js";
import { planServicePort } from "./service-plan.js";

/** Takes back what the port claimed last time. */
export function releasePort(c: Carried, port: string): void {
  const record = c.ports.get(port);
  if (!record) return;
  c.ports.delete(port);
  const svc = serviceOfPortKey(port);
  const ports = c.portsOfService.get(svc);
  ports?.delete(port);
  if (ports?.size === 0) c.portsOfService.delete(svc);
  for (const name of record.frontends) c.frontends.release(name, port);
  for (const name of record.backends) c.backends.release(name, port);
  if (record.noLocalInternal) c.noLocal.internal--;
  if (record.noLocalExternal) c.noLocal.external--;
}

/** Renders the port (if it exists) and claims what it needs. */
export function claimPort(
  c: Carried,
  options: EBPFOptions,
  input: { readonly services: ServicePortMap; readonly endpoints: EndpointsMap },
  port: string,
): void {
  const sp = input.services.get(port);
  if (!sp) return;
  const plan = planServicePort(options, sp, input.endpoints.get(port) ?? []);
  for (const f of plan.frontends) c.frontends.claim(f.name, port, f);
  for (const [name, b] of plan.backends) c.backends.claim(name, port, b);
  c.ports.set(port, {
    frontends: plan.frontends.map((f) => f.name),
    backends: [...plan.backends.keys()],
    noLocalInternal: plan.noLocalInternal,
    noLocalExternal: plan.noLocalExternal,
  });
  const svc = serviceOfPortKey(port);
  const ports = c.portsOfService.get(svc);
  if (ports) ports.add(port);
  else c.portsOfService.set(svc, new Set([port]));
  if (plan.noLocalInternal) c.noLocal.internal++;
  if (plan.noLocalExternal) c.noLocal.external++;
}

/** The service port keys of changed Services, before and after, sorted. */
export function changedPorts(
  c: Carried,
  input: { readonly services: ServicePortMap; readonly changedServices?: ReadonlySet<string> },
): string[] {
  const changed = input.changedServices ?? new Set<string>();
  const ports = new Set<string>();
  for (const svc of changed) for (const port of c.portsOfService.get(svc) ?? []) ports.add(port);
  // A changed Service may have new ports: one pass over the keys finds them.
  if (changed.size > 0) {
    for (const port of input.services.keys()) if (changed.has(serviceOfPortKey(port))) ports.add(port);
  }
  return [...ports].sort();
}
