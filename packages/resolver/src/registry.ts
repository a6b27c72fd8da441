import type { Setup } from "./plugin/setup.js";
import { setupAcl } from "./plugins/acl/acl.js";
import { setupAny } from "./plugins/any/any.js";
import type { AutoPathDeps } from "./plugins/autopath/setup.js";
import { setupAutoPath } from "./plugins/autopath/setup.js";
import type { BindDeps } from "./plugins/bind/bind.js";
import { setupBind } from "./plugins/bind/bind.js";
import type { CacheDeps } from "./plugins/cache/setup.js";
import { setupCache } from "./plugins/cache/setup.js";
import { setupCancel } from "./plugins/cancel/cancel.js";
import { setupDebug } from "./plugins/debug/debug.js";
import type { ErrorsDeps } from "./plugins/errors/errors.js";
import { setupErrors } from "./plugins/errors/errors.js";
import type { ForwardDeps } from "./plugins/forward/setup.js";
import { setupForward } from "./plugins/forward/setup.js";
import { setupHeader } from "./plugins/header/header.js";
import type { HealthDeps } from "./plugins/health/health.js";
import { setupHealth } from "./plugins/health/health.js";
import type { HostsDeps } from "./plugins/hosts/setup.js";
import { setupHosts } from "./plugins/hosts/setup.js";
import type { KubernetesDeps } from "./plugins/kubernetes/setup.js";
import { setupKubernetes } from "./plugins/kubernetes/setup.js";
import type { LoadBalanceDeps } from "./plugins/loadbalance/loadbalance.js";
import { setupLoadBalance } from "./plugins/loadbalance/loadbalance.js";
import { setupLocal } from "./plugins/local/local.js";
import type { LogDeps } from "./plugins/log/log.js";
import { setupLog } from "./plugins/log/log.js";
import type { LoopDeps } from "./plugins/loop/loop.js";
import { setupLoop } from "./plugins/loop/loop.js";
import { setupMinimal } from "./plugins/minimal/minimal.js";
import { setupNsid } from "./plugins/nsid/nsid.js";
import type { PrometheusDeps } from "./plugins/prometheus/prometheus.js";
import { setupPrometheus } from "./plugins/prometheus/prometheus.js";
import { setupReady } from "./plugins/ready/ready.js";
import type { ReloadDeps } from "./plugins/reload/reload.js";
import { setupReload } from "./plugins/reload/reload.js";
import { setupRewrite } from "./plugins/rewrite/setup.js";
import type { TemplateDeps } from "./plugins/template/setup.js";
import { setupTemplate } from "./plugins/template/setup.js";
import { setupTimeouts } from "./plugins/timeouts/timeouts.js";
import { setupWhoami } from "./plugins/whoami/whoami.js";

/** Everything any built-in plugin may take from the embedding program. */
export type ResolverDeps = KubernetesDeps &
  ErrorsDeps &
  LoadBalanceDeps &
  HealthDeps &
  CacheDeps &
  ForwardDeps &
  PrometheusDeps &
  LoopDeps &
  LogDeps &
  ReloadDeps &
  HostsDeps &
  TemplateDeps &
  AutoPathDeps &
  BindDeps;

/** The plugins this build has. Directives CoreDNS knows but this map lacks fail with a clear error. */
export function defaultRegistry(): Map<string, Setup<ResolverDeps>> {
  return new Map<string, Setup<ResolverDeps>>([
    ["reload", setupReload],
    ["ready", setupReady],
    ["health", setupHealth],
    ["prometheus", setupPrometheus],
    ["errors", setupErrors],
    ["log", setupLog],
    ["loadbalance", setupLoadBalance],
    ["rewrite", setupRewrite],
    ["autopath", setupAutoPath],
    ["cache", setupCache],
    ["hosts", setupHosts],
    ["kubernetes", setupKubernetes],
    ["loop", setupLoop],
    ["forward", setupForward],
    ["whoami", setupWhoami],
    ["template", setupTemplate],
    ["any", setupAny],
    ["minimal", setupMinimal],
    ["header", setupHeader],
    ["nsid", setupNsid],
    ["local", setupLocal],
    ["acl", setupAcl],
    ["debug", setupDebug],
    ["cancel", setupCancel],
    ["timeouts", setupTimeouts],
    ["bind", setupBind],
  ]);
}
