import type { Setup } from "./plugin/setup.js";
import type { ErrorsDeps } from "./plugins/errors/errors.js";
import { setupErrors } from "./plugins/errors/errors.js";
import type { HealthDeps } from "./plugins/health/health.js";
import { setupHealth } from "./plugins/health/health.js";
import type { KubernetesDeps } from "./plugins/kubernetes/setup.js";
import { setupKubernetes } from "./plugins/kubernetes/setup.js";
import type { LoadBalanceDeps } from "./plugins/loadbalance/loadbalance.js";
import { setupLoadBalance } from "./plugins/loadbalance/loadbalance.js";
import { setupReady } from "./plugins/ready/ready.js";

/** Everything any built-in plugin may take from the embedding program. */
export type ResolverDeps = KubernetesDeps & ErrorsDeps & LoadBalanceDeps & HealthDeps;

/** The plugins this build has. Directives CoreDNS knows but this map lacks fail with a clear error. */
export function defaultRegistry(): Map<string, Setup<ResolverDeps>> {
  return new Map<string, Setup<ResolverDeps>>([
    ["ready", setupReady],
    ["health", setupHealth],
    ["errors", setupErrors],
    ["loadbalance", setupLoadBalance],
    ["kubernetes", setupKubernetes],
  ]);
}
