import { join } from "node:path";
import { labPaths } from "../netns/state.js";

/** Where a kind lab keeps its files: the same state folder (and lab.json) as a netns lab, so one `down` finds either. */
export interface KindPaths {
  dir: string;
  stateFile: string;
  /** The cluster's admin kubeconfig; kind writes it here rather than into ~/.kube/config. */
  kubeconfig: string;
  /** The stack as applied, one multi-document file. */
  manifests: string;
  /** kube-proxy's part of it, applied first. */
  proxyManifests: string;
  logs: string;
  /** Every command's output during `up` and `down`, appended. */
  commandLog: string;
}

export function kindPaths(dir: string): KindPaths {
  const { stateFile, logs } = labPaths(dir);
  return {
    dir,
    stateFile,
    kubeconfig: join(dir, "kubeconfig"),
    manifests: join(dir, "stack.yaml"),
    proxyManifests: join(dir, "stack-kube-proxy.yaml"),
    logs,
    commandLog: join(logs, "kind-commands.log"),
  };
}
