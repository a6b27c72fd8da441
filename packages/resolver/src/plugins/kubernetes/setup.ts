import type { Stanza } from "../../corefile/parse.js";
import type { Metrics } from "../../metrics/metrics.js";
import { PluginError } from "../../plugin/handler.js";
import { parseDuration } from "../../plugin/pkg/duration.js";
import { readSearchList } from "../../plugin/pkg/resolv-conf.js";
import { offerAutoPath } from "../../plugin/pkg/search-source.js";
import type { Upstream } from "../../plugin/pkg/upstream.js";
import type { Setup } from "../../plugin/setup.js";
import { argError, onlyOnce, stanzaError } from "../../plugin/setup.js";
import { normalizeZone } from "../../plugin/zones.js";
import { kubernetesAutoPath } from "./autopath.js";
import type { ClusterView } from "./cluster-view.js";
import { KubernetesHandler } from "./handler.js";
import { connect } from "./kube/connect.js";
import { informerLogger } from "./kube/klog-lines.js";
import { KubeClusterView } from "./kube/kube-cluster-view.js";
import { type LabelSelector, parseLabelSelector } from "./label-selector.js";
import type { KubernetesOptions } from "./options.js";
import { defaultOptions } from "./options.js";

/** What the kubernetes plugin needs from outside: the cluster, and optionally a way to resolve upstream. */
export interface KubernetesDeps {
  /** A cluster to answer from; without one the plugin connects to the API server itself. */
  cluster?: ClusterView;
  upstream?: Upstream;
  metrics?: Metrics;
  /** Where informational lines go (`[WARNING] plugin/kubernetes: ...`); stdout by default, as CoreDNS. */
  log?: (line: string) => void;
  /** The resolv.conf whose search list ends every `autopath @kubernetes` path; /etc/resolv.conf by default. */
  resolvConf?: string;
}

const PLUGIN = "kubernetes";

/** Client tuning CoreDNS accepts; checked and kept aside (our client has no client-side rate limiter). */
const API_OPTIONS = new Set(["apiserver_qps", "apiserver_burst", "apiserver_max_inflight"]);

/** Parses a `kubernetes [ZONES...] { ... }` stanza (CoreDNS's ParseStanza). */
export function parseKubernetes(stanza: Stanza, blockZones: readonly string[]): KubernetesOptions {
  const zones = (stanza.args.length > 0 ? stanza.args : blockZones).map(normalizeZone);
  const opts = defaultOptions(zones);
  if (opts.primaryZone === "") throw stanzaError(stanza, PLUGIN, "non-reverse zone name must be used");
  let namespaces: string[] = [];
  for (const line of stanza.block) {
    const args = line.args;
    switch (line.name) {
      case "endpoint_pod_names":
        if (args.length > 0) throw argError(line, PLUGIN);
        opts.endpointPodNames = true;
        break;
      case "pods": {
        const mode = args[0];
        if (args.length !== 1) throw argError(line, PLUGIN);
        if (mode !== "disabled" && mode !== "insecure" && mode !== "verified") {
          throw stanzaError(
            line,
            PLUGIN,
            `wrong value for pods: ${mode}, must be one of: disabled, verified, insecure`,
          );
        }
        opts.podMode = mode;
        break;
      }
      case "namespaces":
        if (args.length === 0) throw argError(line, PLUGIN);
        namespaces = [...namespaces, ...args];
        break;
      case "labels":
        opts.labelSelector = selectorOption(line, "label selector", args);
        break;
      case "namespace_labels":
        opts.namespaceLabelSelector = selectorOption(line, "namespace_label selector", args);
        break;
      case "multicluster":
      case "zonal":
        throw stanzaError(line, PLUGIN, `option '${line.name}' is not supported yet`);
      case "fallthrough":
        opts.fallthrough = args.map(normalizeZone);
        break;
      case "ttl": {
        const text = args[0];
        if (args.length === 0 || text === undefined) throw argError(line, PLUGIN);
        if (!/^-?\d+$/.test(text)) throw stanzaError(line, PLUGIN, `ttl must be a number: ${text}`);
        const ttl = Number(text);
        if (ttl < 0 || ttl > 3600) throw stanzaError(line, PLUGIN, `ttl must be in range [0, 3600]: ${ttl}`);
        opts.ttl = ttl;
        break;
      }
      case "kubeconfig": {
        const [path, context] = args;
        if (path === undefined || args.length > 2) throw argError(line, PLUGIN);
        opts.kubeconfig = context === undefined ? { path } : { path, context };
        break;
      }
      case "endpoint": {
        const url = args[0];
        if (url === undefined) throw argError(line, PLUGIN);
        // CoreDNS accepts a list and uses the first; so do we.
        if (!/^https?:\/\/[^/\s]+/.test(url))
          throw stanzaError(line, PLUGIN, `invalid endpoint URL '${url}'`);
        opts.endpoint = url;
        break;
      }
      case "tls": {
        const [cert, key, ca] = args;
        if (cert === undefined || key === undefined || ca === undefined || args.length !== 3)
          throw argError(line, PLUGIN);
        opts.tls = { cert, key, ca };
        break;
      }
      case "noendpoints":
        if (args.length > 0) throw argError(line, PLUGIN);
        opts.endpoints = false;
        break;
      case "ignore":
        if (args[0] !== "empty_service")
          throw stanzaError(line, PLUGIN, `unable to parse ignore value: '${args[0] ?? ""}'`);
        opts.ignoreEmptyService = true;
        break;
      case "startup_timeout": {
        const ms = parseDuration(args[0] ?? "");
        if (args.length !== 1 || ms === undefined)
          throw stanzaError(line, PLUGIN, `invalid startup_timeout '${args[0] ?? ""}'`);
        opts.startupTimeoutMs = ms;
        break;
      }
      default:
        if (API_OPTIONS.has(line.name)) {
          if (args.length === 0) throw argError(line, PLUGIN);
          break;
        }
        throw stanzaError(line, PLUGIN, `unknown property '${line.name}'`);
    }
    if (line.block.length > 0) throw stanzaError(line, PLUGIN, `'${line.name}' does not take a block`);
  }
  opts.namespaces = new Set(namespaces);
  if (opts.namespaces.size > 0 && opts.namespaceLabelSelector)
    throw stanzaError(stanza, PLUGIN, "namespaces and namespace_labels cannot both be set");
  return opts;
}

/** `labels` / `namespace_labels`: the arguments joined with spaces are one selector, as in CoreDNS. */
function selectorOption(line: Stanza, what: string, args: readonly string[]): LabelSelector {
  if (args.length === 0) throw argError(line, PLUGIN);
  const text = args.join(" ");
  try {
    return parseLabelSelector(text);
  } catch (err) {
    // Upstream's words (checked against its binary), without a position.
    throw new PluginError(PLUGIN, `unable to parse ${what} value: '${text}': ${(err as Error).message}`);
  }
}

export const setupKubernetes: Setup<KubernetesDeps> = (ctx) => {
  const stanza = onlyOnce(ctx, PLUGIN);
  const opts = parseKubernetes(stanza, ctx.blockZones);
  const cluster = ctx.deps.cluster ?? watchCluster(ctx, stanza, opts);
  offerAutoPath(ctx.server, PLUGIN, kubernetesAutoPath(cluster, opts, hostSearch(ctx.deps.resolvConf)));
  return {
    plugin: (next) => {
      const handler = new KubernetesHandler(cluster, opts, next, ctx.deps.upstream);
      ctx.reportReadiness(handler);
      return handler;
    },
  };
};

/** This server's own search list, read once at setup; none when the file cannot be read, as in CoreDNS. */
function hostSearch(path = "/etc/resolv.conf"): string[] {
  try {
    return readSearchList(path);
  } catch {
    return [];
  }
}

/**
 * Connects to the API server and registers the informers' lifecycle. Startup waits for the caches up to
 * `startup_timeout`, then serves anyway (SERVFAIL for misses until synced), as CoreDNS does.
 */
function watchCluster(
  ctx: Parameters<Setup<KubernetesDeps>>[0],
  stanza: Stanza,
  opts: KubernetesOptions,
): ClusterView {
  let client: ReturnType<typeof connect>;
  try {
    client = connect(opts, process.env, ctx.deps.metrics);
  } catch (err) {
    throw stanzaError(stanza, PLUGIN, (err as Error).message);
  }
  const log = ctx.deps.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const view = new KubeClusterView({
    client,
    pods: opts.podMode === "verified",
    endpoints: opts.endpoints,
    ...(opts.labelSelector ? { labelSelector: opts.labelSelector.text } : {}),
    ...(opts.namespaceLabelSelector ? { namespaceLabelSelector: opts.namespaceLabelSelector.text } : {}),
    logger: informerLogger(log),
    ...(ctx.deps.metrics ? { metrics: ctx.deps.metrics } : {}),
    onStop: () => client.close(),
  });
  ctx.lifecycle.onStartup(async () => {
    view.start();
    if (!(await view.waitForSync(opts.startupTimeoutMs)))
      log(`[WARNING] plugin/kubernetes: starting server with unsynced Kubernetes API`);
  });
  ctx.lifecycle.onShutdown(() => view.stop());
  return view;
}
