// etcd + kube-apiserver for the comparison. Like the lab's startControlPlane, but with a dual-stack
// service CIDR: with the lab's IPv4-only default the apiserver refuses every Service with an IPv6
// family, and the controller's per-family reconcile could not be compared at all.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freeControlPlanePorts } from "@switchyard/testbed";
import { down, up } from "@switchyard/testbed/controlplane";

export const SERVICE_CIDRS = "10.96.0.0/16,fd00:10:96::/112";

export interface ControlPlane {
  server: string;
  stateDir: string;
  stop(): Promise<void>;
}

export async function startDualStackControlPlane(): Promise<ControlPlane> {
  const stateDir = mkdtempSync(join(tmpdir(), "switchyard-slice-diff-"));
  const state = await up({
    stateDir,
    detached: false,
    controllerManager: false,
    scheduler: false,
    serviceCidr: SERVICE_CIDRS,
    ports: await freeControlPlanePorts(),
    out: { write: () => {} },
  });
  return {
    server: state.server,
    stateDir,
    stop: async () => {
      await down(stateDir);
    },
  };
}
