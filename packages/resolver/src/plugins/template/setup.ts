import { Metrics } from "../../metrics/metrics.js";
import type { Upstream } from "../../plugin/pkg/upstream.js";
import type { Setup } from "../../plugin/setup.js";
import { TemplateHandler } from "./handler.js";
import { templateMetrics } from "./metrics.js";
import { parseTemplates } from "./options.js";

export interface TemplateDeps {
  metrics?: Metrics;
  /** Where CNAME targets are resolved; the resolver points it back at its own servers. */
  upstream?: Upstream;
}

/** `template CLASS TYPE [ZONE...] { ... }`, any number per server block; they are tried in Corefile order. */
export const setupTemplate: Setup<TemplateDeps> = (ctx) => {
  const rules = parseTemplates(ctx.stanzas, ctx.blockZones);
  const zones = rules.flatMap((r) => r.zones);
  const metrics = templateMetrics(ctx.deps.metrics ?? new Metrics());
  return { plugin: (next) => new TemplateHandler(next, zones, rules, metrics, ctx.deps.upstream) };
};
