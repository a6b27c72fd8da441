// Where the API server is and how to reach it when a component takes both --kubeconfig and --master (kube-proxy,
// kube-controller-manager): combined as client-go's clientcmd.BuildConfigFromFlags combines them (its
// deferred-loading config with the master as the cluster's server override).
import type { ClusterAccess } from "./cluster-access.js";
import { loadKubeConfig } from "./kubeconfig.js";

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

/** Why a --master value is refused (neither an http(s) URL nor host:port), or undefined; "" is not given. */
export function masterFlagError(master: string): string | undefined {
  return master !== "" && masterURL(master) === undefined
    ? "want a URL such as https://10.0.0.1:6443, or host:port"
    : undefined;
}

/**
 * The cluster access a component uses. Neither set: the usual search (in-cluster first in a pod). Only a master:
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
    return { getCurrentCluster: () => cluster, applyToHTTPSOptions: async () => {} };
  }
  const file = load({ kubeconfig });
  const current = file.getCurrentCluster();
  const cluster = current ? { ...current, server } : { name: "master", server, skipTLSVerify: false };
  return {
    getCurrentCluster: () => cluster,
    applyToHTTPSOptions: async (opts) => {
      if (secure) await file.applyToHTTPSOptions(opts);
    },
  };
}
