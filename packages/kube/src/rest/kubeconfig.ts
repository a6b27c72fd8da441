import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { type ClusterAccess, inClusterAccess, serviceAccountDir } from "./in-cluster.js";
import { readKubeconfigFile } from "./kubeconfig-reader.js";
import { applyKubectlTokenFiles } from "./token-file.js";

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
 * client-node's KubeConfig class, loaded on first use: only kubeconfig files need it (contexts, exec
 * plugins, auth providers), and a process that never reads one (a pod on its service account) is spared
 * the library's memory. Node 24 loads the ES module synchronously through require.
 */
function kubeConfigClass(): typeof KubeConfig {
  const load = createRequire(import.meta.url);
  return (load("@kubernetes/client-node") as { KubeConfig: typeof KubeConfig }).KubeConfig;
}

/** One kubeconfig file through client-node (kubectl's `tokenFile` users included). */
export function loadKubeConfigFile(path: string, source = "--kubeconfig"): KubeConfig {
  const kc = new (kubeConfigClass())();
  try {
    kc.loadFromFile(path);
    applyKubectlTokenFiles(kc, path);
  } catch (err) {
    throw new Error(`kubeconfig ${path} (${source}) is invalid: ${(err as Error).message}`);
  }
  if (!kc.getCurrentCluster()) throw new Error(`kubeconfig ${path} (${source}) has no current cluster`);
  return kc;
}

/**
 * The access a kubeconfig file gives, under `context` when given (else its current context): read without
 * client-node for certificate and token users (kubeconfig-reader.ts), through client-node for the others
 * (exec plugins, auth providers). Throws one line naming the file.
 */
export function kubeconfigAccess(path: string, source = "--kubeconfig", context?: string): ClusterAccess {
  const plain = readKubeconfigFile(path, source, context);
  if (plain) return plain;
  const kc = loadKubeConfigFile(path, source);
  if (context !== undefined) {
    if (!kc.getContextObject(context)) throw new Error(`kubeconfig ${path} has no context '${context}'`);
    kc.setCurrentContext(context);
  }
  if (!kc.getCurrentCluster()) throw new Error(`kubeconfig ${path} (${source}) has no current cluster`);
  return kc;
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
