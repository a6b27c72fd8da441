import type * as https from "node:https";

/**
 * The cluster a configuration points at. The field names are client-node's (its KubeConfig returns this shape),
 * declared here so that no public type of this package names that optional library.
 */
export interface CurrentCluster {
  readonly name: string;
  readonly server: string;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName?: string;
  /** A kubeconfig cluster's `proxy-url`: requests go through it (client-node's agent, client-node.ts). */
  readonly proxyUrl?: string;
}

/**
 * What HttpRestClient asks of a configuration: the API server, and the TLS material and headers of each
 * request. The in-cluster configuration, kubeconfig files and client-node's KubeConfig all give both.
 */
export interface ClusterAccess {
  getCurrentCluster(): CurrentCluster | null;
  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void>;
}
