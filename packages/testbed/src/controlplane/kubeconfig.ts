import { readFileSync } from "node:fs";
import { writePrivateFile } from "../private-files.js";

export interface KubeconfigOptions {
  server: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  user: string;
  clusterName?: string;
}

/**
 * A kubeconfig with the certificates embedded, so it can be copied anywhere (and into a pod or a node namespace)
 * and still work.
 */
export function renderKubeconfig(o: KubeconfigOptions): string {
  const b64 = (path: string) => readFileSync(path).toString("base64");
  const cluster = o.clusterName ?? "switchyard-lab";
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${cluster}`,
    "  cluster:",
    `    server: ${o.server}`,
    `    certificate-authority-data: ${b64(o.caFile)}`,
    "users:",
    `- name: ${o.user}`,
    "  user:",
    `    client-certificate-data: ${b64(o.certFile)}`,
    `    client-key-data: ${b64(o.keyFile)}`,
    "contexts:",
    `- name: ${o.user}@${cluster}`,
    "  context:",
    `    cluster: ${cluster}`,
    `    user: ${o.user}`,
    `current-context: ${o.user}@${cluster}`,
    "",
  ].join("\n");
}

export function writeKubeconfig(path: string, o: KubeconfigOptions): void {
  writePrivateFile(path, renderKubeconfig(o));
}
