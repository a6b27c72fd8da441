import { type ProgramVersion, versionText as programVersionText } from "@switchyard/kube/flags";

export const VERSION = "0.1.0";
/** The kube-proxy release whose flags, config file and metrics this proxy follows. */
export const KUBE_PROXY_VERSION = "v1.37.2";

const PROGRAM: ProgramVersion = {
  name: "Switchyard-Proxy",
  version: VERSION,
  upstream: `kube-proxy ${KUBE_PROXY_VERSION}`,
};

/** What `--version` prints (`--version=raw`: the details as JSON). */
export const versionText = (raw: boolean): string => programVersionText(PROGRAM, raw);
