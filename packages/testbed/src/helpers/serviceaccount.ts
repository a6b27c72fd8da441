// What a test needs to run a program as a pod would, on its ServiceAccount: a token from the TokenRequest API,
// and the folder a kubelet mounts at /var/run/secrets/kubernetes.io/serviceaccount. Applying the shipped
// manifests (RBAC) is the lab's (`applyManifests` of @switchyard/lab/testing).
import { chmodSync, copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api } from "./api.js";

/** A bound token for the ServiceAccount (TokenRequest, the API a kubelet uses for projected tokens). */
export async function serviceAccountToken(
  api: Api,
  namespace: string,
  name: string,
  expirationSeconds = 3600,
): Promise<string> {
  const res = await api.post<{ status?: { token?: string } }>(
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds } },
  );
  if (!res.status?.token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  return res.status.token;
}

/**
 * A new folder holding token, ca.crt and namespace, laid out and readable as a kubelet's projected
 * ServiceAccount volume (mode 0644 files: the image's non-root user must read them).
 */
export function serviceAccountFolder(token: string, caFile: string, namespace: string): string {
  const dir = mkdtempSync(join(tmpdir(), "sy-serviceaccount-"));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, "token"), token, { mode: 0o644 });
  copyFileSync(caFile, join(dir, "ca.crt"));
  chmodSync(join(dir, "ca.crt"), 0o644);
  writeFileSync(join(dir, "namespace"), namespace, { mode: 0o644 });
  return dir;
}
