import { type ProgramVersion, versionText as programVersionText } from "@switchyard/kube/flags";

/** This program, and the kube-controller-manager release whose two EndpointSlice controllers and flags it follows. */
const PROGRAM: ProgramVersion = {
  name: "Switchyard-Slice-Controller",
  version: "0.1.0",
  upstream: "kube-controller-manager v1.37.2",
};

/** What `--version` prints (`--version=raw`: the details as JSON). */
export const versionText = (raw: boolean): string => programVersionText(PROGRAM, raw);
