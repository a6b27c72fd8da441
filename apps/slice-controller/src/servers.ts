import { ComponentServer, type HealthCheck, type Logger } from "@switchyard/kube";
import { Registry } from "prom-client";
import { type ControllerFlags, parseHostPort } from "./cli/flags.js";

export interface Servers {
  metricsAddress: string | undefined;
  healthzAddress: string | undefined;
  stop(): Promise<void>;
}

export interface Checks {
  /** Liveness, as kube-controller-manager's leaderElection healthz check. */
  leaderElection: HealthCheck;
  /** Readiness: informer caches synced. */
  informerSync: HealthCheck;
}

function format(address: { address: string; port: number }): string {
  return address.address.includes(":")
    ? `[${address.address}]:${address.port}`
    : `${address.address}:${address.port}`;
}

/**
 * The metrics listener, and health either on it or on its own listener. A separate health listener
 * gets an empty registry: probes often need a Pod-IP address, metrics should not follow them there.
 */
export async function startServers(
  flags: ControllerFlags,
  registry: Registry,
  logger: Logger,
  checks: Checks,
): Promise<Servers> {
  const started: ComponentServer[] = [];
  const listen = async (address: string, reg: Registry, withChecks: boolean) => {
    const hp = parseHostPort(address);
    if (hp === undefined) throw new Error(`invalid listen address ${address}`);
    const server = new ComponentServer({ host: hp.host || "0.0.0.0", port: hp.port, registry: reg, logger });
    if (withChecks) {
      server.addLivenessCheck("leaderElection", checks.leaderElection);
      server.addReadinessCheck("informer-sync", checks.informerSync);
    }
    const bound = await server.start();
    started.push(server);
    return format(bound);
  };
  const stop = async () => {
    await Promise.all(started.map((s) => s.stop()));
  };
  try {
    const separateHealth = flags.healthzBindAddress !== undefined;
    const metricsAddress =
      flags.metricsBindAddress === undefined
        ? undefined
        : await listen(flags.metricsBindAddress, registry, !separateHealth);
    const healthzAddress =
      flags.healthzBindAddress === undefined
        ? metricsAddress
        : await listen(flags.healthzBindAddress, new Registry(), true);
    return { metricsAddress, healthzAddress, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
