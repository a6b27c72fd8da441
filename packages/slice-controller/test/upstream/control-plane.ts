// etcd + kube-apiserver for the comparison. Like the lab's startControlPlane, but with a dual-stack
// service CIDR: with the lab's IPv4-only default the apiserver refuses every Service with an IPv6
// family, and the controller's per-family reconcile could not be compared at all.
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { down, up } from "@switchyard/lab";

export const SERVICE_CIDRS = "10.96.0.0/16,fd00:10:96::/112";

export interface ControlPlane {
  server: string;
  stateDir: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port: 0 }, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startDualStackControlPlane(): Promise<ControlPlane> {
  const stateDir = mkdtempSync(join(tmpdir(), "switchyard-slice-diff-"));
  const state = await up({
    stateDir,
    detached: false,
    controllerManager: false,
    scheduler: false,
    serviceCidr: SERVICE_CIDRS,
    ports: {
      apiserver: await freePort(),
      etcdClient: await freePort(),
      etcdPeer: await freePort(),
      controllerManager: await freePort(),
      scheduler: await freePort(),
    },
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
