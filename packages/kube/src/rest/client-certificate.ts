import type * as https from "node:https";
import type { ClusterAccess } from "./cluster-access.js";

/** An API server and the PEM material to reach it as a client-certificate user. */
export interface ClientCertificate {
  server: string;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/**
 * Access by client certificate, without a kubeconfig file: what a kubeconfig user with inline certificate data
 * amounts to (the lab's admin identity, a kind cluster's admin.conf). Kept free of client-node, as in-cluster.ts
 * is, so a process that never reads a kubeconfig file does not load that library.
 */
export function clientCertificateAccess(c: ClientCertificate): ClusterAccess {
  const cluster = { name: "client-certificate", server: c.server, skipTLSVerify: false };
  return {
    getCurrentCluster: () => cluster,
    applyToHTTPSOptions: async (opts: https.RequestOptions) => {
      opts.ca = c.ca;
      opts.cert = c.cert;
      opts.key = c.key;
    },
  };
}
