import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
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

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * Loads a KubeConfig in the order kubectl users expect: an explicit path,
 * then $KUBECONFIG, then in-cluster config, then ~/.kube/config. Fails with
 * one line naming what was tried.
 */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig {
  const env = options.env ?? process.env;
  const kc = new KubeConfig();
  const tried: string[] = [];

  const fromFile = (path: string, source: string): KubeConfig | undefined => {
    tried.push(`${source} ${path}`);
    if (!existsSync(path)) return undefined;
    try {
      kc.loadFromFile(path);
      applyKubectlTokenFiles(kc, path);
    } catch (err) {
      throw new Error(`kubeconfig ${path} (${source}) is invalid: ${(err as Error).message}`);
    }
    if (!kc.getCurrentCluster()) throw new Error(`kubeconfig ${path} (${source}) has no current cluster`);
    return kc;
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
    if (existsSync(`${prefix}${serviceAccountDir}/token`)) {
      // client-node reads the host and port from process.env itself.
      kc.loadFromCluster(prefix);
      return kc;
    }
  }
  const loaded = fromFile(join(options.home ?? homedir(), ".kube", "config"), "default");
  if (loaded) return loaded;
  throw new Error(`no Kubernetes configuration found (tried ${tried.join(", ")})`);
}
