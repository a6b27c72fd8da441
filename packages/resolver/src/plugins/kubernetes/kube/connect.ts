import { existsSync, readFileSync } from "node:fs";
import { type ClusterAccess, HttpRestClient, inClusterAccess, kubeconfigAccess } from "@switchyard/kube";
import type { Metrics } from "../../../metrics/metrics.js";
import type { KubernetesOptions } from "../options.js";
import { clientMetrics } from "./client-metrics.js";

const USER_AGENT = "switchyard-dns/0.1.0";

/**
 * The API client CoreDNS's rules pick: `kubeconfig PATH [CONTEXT]` first, then `endpoint URL` (with
 * `tls` client certificates), else the in-cluster service account. Fails with one line naming the
 * source that did not work. With `metrics`, every request feeds CoreDNS's client metrics.
 */
export function connect(
  opts: KubernetesOptions,
  env: NodeJS.ProcessEnv = process.env,
  metrics?: Metrics,
): HttpRestClient {
  const client = (access: ClusterAccess) => {
    const server = access.getCurrentCluster()?.server ?? "";
    const onRequest = metrics ? { onRequest: clientMetrics(metrics, server) } : {};
    return new HttpRestClient(access, { userAgent: USER_AGENT, ...onRequest });
  };
  if (opts.kubeconfig) {
    if (!existsSync(opts.kubeconfig.path))
      throw new Error(`kubeconfig ${opts.kubeconfig.path} does not exist`);
    return client(kubeconfigAccess(opts.kubeconfig.path, "kubeconfig", opts.kubeconfig.context));
  }
  if (opts.endpoint) return client(endpointConfig(opts.endpoint, opts.tls));
  // Only the service account: CoreDNS never falls back to $KUBECONFIG or ~/.kube/config. Read without
  // client-node, which a DNS pod under kubeadm's 170Mi limit cannot afford to load.
  return client(inClusterAccess({ env }));
}

/**
 * A bare API server URL, without a kubeconfig file. Only the two members the REST client reads are
 * provided; the files named by `tls` are read on every request so rotated certificates are picked up.
 */
function endpointConfig(url: string, tls: KubernetesOptions["tls"]): ClusterAccess {
  return {
    getCurrentCluster: () => ({ name: "endpoint", server: url, skipTLSVerify: false }),
    applyToHTTPSOptions: async (o) => {
      if (!tls) return;
      o.ca = readFileSync(tls.ca);
      o.cert = readFileSync(tls.cert);
      o.key = readFileSync(tls.key);
    },
  };
}
