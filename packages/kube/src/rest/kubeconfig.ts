import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { clientNodeAccess } from "./client-node.js";
import type { ClusterAccess } from "./cluster-access.js";
import { inClusterAccess, serviceAccountDir } from "./in-cluster.js";
import { readKubeconfigFile } from "./kubeconfig-reader.js";

export interface LoadKubeConfigOptions {
  /** Explicit kubeconfig path (a --kubeconfig flag); wins over everything else. */
  kubeconfig?: string;
  /** Injected for tests; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Injected for tests; os.homedir() by default. */
  home?: string;
  /** Prefix for the in-cluster service-account paths (tests point it at a temp dir). */
  inClusterPathPrefix?: string;
}

/**
 * The access a kubeconfig file gives, under `context` when given (else its current context): read here for
 * certificate and token users (kubeconfig-reader.ts), through the optional @kubernetes/client-node for exec
 * plugins, auth providers, basic auth, impersonation and proxies, imported at the first request. Throws one line
 * naming the file, and the package when such a file meets an install without it.
 */
export function kubeconfigAccess(path: string, source = "--kubeconfig", context?: string): ClusterAccess {
  const file = readKubeconfigFile(path, source, context);
  return "access" in file ? file.access : clientNodeAccess(path, source, file, context);
}

/**
 * Finds the configuration in the order kubectl users expect: an explicit path,
 * then $KUBECONFIG, then in-cluster config, then ~/.kube/config. Fails with
 * one line naming what was tried. Files are read as kubeconfigAccess reads them; the in-cluster
 * configuration without client-node (in-cluster.ts).
 */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): ClusterAccess {
  const env = options.env ?? process.env;
  const tried: string[] = [];

  const fromFile = (path: string, source: string): ClusterAccess | undefined => {
    tried.push(`${source} ${path}`);
    if (!existsSync(path)) return undefined;
    return kubeconfigAccess(path, source);
  };

  if (options.kubeconfig) {
    const loaded = fromFile(options.kubeconfig, "--kubeconfig");
    if (!loaded) throw new Error(`kubeconfig ${options.kubeconfig} does not exist`);
    return loaded;
  }
  // KUBECONFIG may list several files; like kubectl's merge, the first existing one wins here.
  const fromEnv = (env.KUBECONFIG ?? "").split(":").filter((p) => p !== "");
  for (const path of fromEnv) {
    const loaded = fromFile(path, "$KUBECONFIG");
    if (loaded) return loaded;
  }
  if (env.KUBERNETES_SERVICE_HOST) {
    const prefix = options.inClusterPathPrefix ?? "";
    tried.push(`in-cluster ${prefix}${serviceAccountDir}`);
    if (existsSync(`${prefix}${serviceAccountDir}/token`))
      return inClusterAccess({ env, pathPrefix: prefix });
  }
  const loaded = fromFile(join(options.home ?? homedir(), ".kube", "config"), "default");
  if (loaded) return loaded;
  throw new Error(`no Kubernetes configuration found (tried ${tried.join(", ")})`);
}
