// @kubernetes/client-node is an optional peer dependency: 64 MB installed and about 50 MiB of a process's memory
// once loaded, for the few kubeconfig features this package does not implement itself (kubeconfig-reader.ts
// names them). It is imported only when a file uses one of them, and only its KubeConfig is used, through the
// slice of it declared below, so that no public type of this package names it: a consumer without it installed
// still typechecks with skipLibCheck off.
import type * as https from "node:https";
import type { ClusterAccess, CurrentCluster } from "./cluster-access.js";
import { applyKubectlTokenFiles } from "./token-file.js";

const CLIENT_NODE = "@kubernetes/client-node";

/** A kubeconfig user as client-node holds it, with the fields token-file.ts reads and writes. */
export interface ClientNodeUser {
  readonly name: string;
  readonly token?: string;
}

/** The part of client-node's KubeConfig used here. */
export interface ClientNodeKubeConfig {
  readonly users: readonly ClientNodeUser[];
  readonly clusters: readonly unknown[];
  readonly contexts: readonly unknown[];
  readonly currentContext: string;
  loadFromFile(path: string): void;
  loadFromOptions(options: object): void;
  setCurrentContext(context: string): void;
  getCurrentCluster(): CurrentCluster | null;
  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void>;
}

/**
 * How client-node is found and loaded; tests inject one that fails. `resolve` throws when the package is not
 * installed, without loading it, so that a missing package is reported when the configuration is read, not at
 * the first request.
 */
export interface ClientNodeLoader {
  resolve(): void;
  load(): Promise<{ KubeConfig: new () => ClientNodeKubeConfig }>;
}

export const clientNodeLoader: ClientNodeLoader = {
  resolve: () => {
    import.meta.resolve(CLIENT_NODE);
  },
  load: () => import("@kubernetes/client-node"),
};

/**
 * The access of a kubeconfig file that needs client-node for `feature` ("user admin uses an exec plugin"), under
 * `context` when given. The server comes from the file as kubeconfig-reader.ts read it; client-node is imported at
 * the first request and then asked for every request's TLS material and headers (an exec plugin's token expires).
 * Throws one line naming the feature and the package when the package is not installed.
 */
export function clientNodeAccess(
  path: string,
  source: string,
  feature: { clientNodeFeature: string; cluster: CurrentCluster },
  context?: string,
  loader: ClientNodeLoader = clientNodeLoader,
): ClusterAccess {
  try {
    loader.resolve();
  } catch {
    throw new Error(
      `kubeconfig ${path} (${source}): ${feature.clientNodeFeature}: install ${CLIENT_NODE} to use it`,
    );
  }
  let config: Promise<ClientNodeKubeConfig> | undefined;
  const loaded = async () => {
    const { KubeConfig } = await loader.load();
    const kc = new KubeConfig();
    try {
      kc.loadFromFile(path);
      applyKubectlTokenFiles(kc, path);
      if (context !== undefined) kc.setCurrentContext(context);
    } catch (err) {
      throw new Error(`kubeconfig ${path} (${source}) is invalid: ${(err as Error).message}`);
    }
    return kc;
  };
  return {
    getCurrentCluster: () => feature.cluster,
    applyToHTTPSOptions: async (opts) => {
      config ??= loaded();
      await (await config).applyToHTTPSOptions(opts);
      // client-node also hands out an agent, kept per cluster and user for the life of the process, so TLS material
      // that changes later (a rotated certificate, an exec plugin's new client certificate) would never reach it.
      // HttpRestClient keeps its own agent per TLS material instead, and takes client-node's only where it is the
      // point: a proxy-url.
      if (feature.cluster.proxyUrl === undefined) delete opts.agent;
    },
  };
}
