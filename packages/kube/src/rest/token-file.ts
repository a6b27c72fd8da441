import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { load } from "js-yaml";
import type { ClientNodeKubeConfig, ClientNodeUser } from "./client-node.js";

interface RawKubeconfig {
  users?: Array<{ name?: string; user?: { tokenFile?: string; token?: string } }>;
}

/**
 * kubectl's kubeconfig names a bearer-token file `tokenFile` (kubeadm's kube-proxy kubeconfig uses it);
 * client-node only knows `token-file` and reads it once. Such users get client-node's file auth instead,
 * which re-reads the file every minute, so rotated service-account tokens keep working.
 */
export function applyKubectlTokenFiles(kc: ClientNodeKubeConfig, path: string): void {
  const raw = load(readFileSync(path, "utf8")) as RawKubeconfig | undefined;
  const files = new Map<string, string>();
  for (const entry of raw?.users ?? []) {
    const tokenFile = entry.user?.tokenFile;
    // Relative paths are relative to the kubeconfig, as kubectl resolves them.
    if (entry.name && tokenFile && !entry.user?.token)
      files.set(entry.name, resolve(dirname(path), tokenFile));
  }
  if (files.size === 0) return;
  const users: ClientNodeUser[] = kc.users.map((u) => {
    const tokenFile = files.get(u.name);
    return tokenFile && !u.token ? { ...u, authProvider: { name: "tokenFile", config: { tokenFile } } } : u;
  });
  kc.loadFromOptions({
    clusters: kc.clusters,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
    users,
  });
}
