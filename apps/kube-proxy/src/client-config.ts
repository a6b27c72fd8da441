// Where the API server is and how to reach it: the kubeconfig path (the --kubeconfig flag, or
// clientConnection.kubeconfig of a --config file) and --master, combined as upstream's
// createClient combines them (client-go's deferred-loading config with the master as the
// cluster's server override).
import { type ClusterAccess, loadKubeConfig } from "@switchyard/kube";

/**
 * --master as client-go reads a host: kept when it has a scheme and a host, else prefixed with
 * http:// (client-go's default when the host alone carries no TLS settings). Undefined when not a URL.
 */
export function masterURL(master: string): string | undefined {
  let url: URL | undefined;
  try {
    const parsed = new URL(master);
    if (parsed.host !== "") url = parsed;
  } catch {
    // no scheme: below
  }
  // A scheme without a host ("http://") is not a host to prefix.
  if (url === undefined && !/^[a-z][a-z0-9+.-]*:\/\//i.test(master)) {
    try {
      url = new URL(`http://${master}`);
    } catch {
      return undefined;
    }
  }
  if (url === undefined) return undefined;
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") return undefined;
  return url.href.replace(/\/$/, "");
}

/**
 * The cluster access the proxy uses. Neither set: the usual search (in-cluster first in a pod). Only a master:
 * that server, anonymously, as client-go builds it from an empty kubeconfig. Both: the kubeconfig with its
 * server replaced; over plain http client-go sends none of the file's credentials or CA, and nor do we.
 */
export function clusterAccess(
  kubeconfig: string,
  master: string,
  load: typeof loadKubeConfig = loadKubeConfig,
): ClusterAccess {
  if (master === "") return load({ kubeconfig: kubeconfig || undefined });
  const server = masterURL(master);
  // The flag was checked when parsed; this guards callers that skip the command line.
  if (server === undefined) throw new Error(`invalid value "${master}" for flag --master: not a URL`);
  const secure = server.startsWith("https:");
  if (kubeconfig === "") {
    const cluster = { name: "master", server, skipTLSVerify: false };
    return { getCurrentCluster: () => cluster, applyToHTTPSOptions: async () => {} } as ClusterAccess;
  }
  const file = load({ kubeconfig });
  const current = file.getCurrentCluster();
  const cluster = current ? { ...current, server } : { name: "master", server, skipTLSVerify: false };
  return {
    getCurrentCluster: () => cluster,
    applyToHTTPSOptions: async (opts) => {
      if (secure) await file.applyToHTTPSOptions(opts);
    },
  } as ClusterAccess;
}
