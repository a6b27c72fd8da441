import { arch, platform } from "node:process";

export const VERSION = "0.1.0";
/** The kube-proxy release whose flags, config file and metrics this proxy follows. */
export const KUBE_PROXY_VERSION = "v1.37.2";

/**
 * What `--version` prints: upstream prints `Kubernetes v1.37.2`; this says plainly what it is and which release it
 * stands in for. `--version=raw` prints the details as one JSON object, as upstream's raw form does.
 */
export function versionText(raw: boolean): string {
  if (!raw) return `Switchyard-Proxy v${VERSION} (kube-proxy ${KUBE_PROXY_VERSION} compatible)`;
  return JSON.stringify({
    gitVersion: `v${VERSION}`,
    compatibleWith: `kube-proxy ${KUBE_PROXY_VERSION}`,
    platform: `${platform}/${arch}`,
    nodeVersion: process.versions.node,
  });
}
