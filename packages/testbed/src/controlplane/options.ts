import { homedir } from "node:os";
import { join } from "node:path";
import { cidrList, nth } from "@switchyard/basics";

export interface ControlPlanePorts {
  apiserver: number;
  etcdClient: number;
  etcdPeer: number;
  controllerManager: number;
  scheduler: number;
}

export interface ControlPlaneOptions {
  /** Everything the control plane writes: pki, kubeconfigs, etcd data, logs, the state file. */
  stateDir: string;
  /** Where every component listens. Loopback by default, like a single-node lab. */
  bindAddress: string;
  /**
   * Where kube-apiserver alone listens. A lab cluster puts it on its bridge so node and pod namespaces reach it,
   * while etcd and the other components stay on the bind address.
   */
  apiserverBindAddress: string;
  /** The address the apiserver announces in the `kubernetes` Service; also put in the serving cert. */
  advertiseAddress: string;
  extraSans: string[];
  ports: ControlPlanePorts;
  serviceCidr: string;
  clusterCidr: string;
  controllerManager: boolean;
  /** kube-controller-manager's own EndpointSlice controllers (upstream's stack); off where Switchyard's runs. */
  sliceControllers: boolean;
  /**
   * Admission plugins kube-apiserver enables on top of its defaults (e.g. OwnerReferencesPermissionEnforcement),
   * for tests that need a cluster stricter than the default one.
   */
  extraAdmissionPlugins: string[];
  scheduler: boolean;
  readyTimeoutMs: number;
  /** Detached processes outlive the CLI (`up`); test suites keep them attached so they die with the runner. */
  detached: boolean;
}

export const defaultPorts: ControlPlanePorts = {
  apiserver: 6443,
  etcdClient: 2379,
  etcdPeer: 2380,
  controllerManager: 10257,
  scheduler: 10259,
};

export function defaultStateDir(env: Record<string, string | undefined> = process.env): string {
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(base, "switchyard", "controlplane");
}

/** What callers pass: every field optional, ports one by one. */
export type ControlPlaneInput = Partial<Omit<ControlPlaneOptions, "ports">> & {
  ports?: Partial<ControlPlanePorts>;
};

export function withDefaults(partial: ControlPlaneInput = {}): ControlPlaneOptions {
  const bindAddress = partial.bindAddress ?? "127.0.0.1";
  return {
    stateDir: partial.stateDir ?? defaultStateDir(),
    bindAddress,
    apiserverBindAddress: partial.apiserverBindAddress ?? bindAddress,
    advertiseAddress: partial.advertiseAddress ?? partial.apiserverBindAddress ?? bindAddress,
    extraSans: partial.extraSans ?? [],
    ports: { ...defaultPorts, ...partial.ports },
    serviceCidr: partial.serviceCidr ?? "10.96.0.0/16",
    clusterCidr: partial.clusterCidr ?? "10.244.0.0/16",
    controllerManager: partial.controllerManager ?? true,
    sliceControllers: partial.sliceControllers ?? false,
    extraAdmissionPlugins: partial.extraAdmissionPlugins ?? [],
    scheduler: partial.scheduler ?? true,
    readyTimeoutMs: partial.readyTimeoutMs ?? 120_000,
    detached: partial.detached ?? true,
  };
}

/**
 * The first usable address of the service range: the apiserver gives it to the `kubernetes` Service. A dual-stack
 * range ("10.96.0.0/16,fd00:10:96::/112") names the primary family first, and that Service is single-stack in it.
 */
export function firstServiceIp(cidrs: string): string {
  const primary = cidrList(cidrs)[0];
  if (!primary) throw new Error(`bad service CIDR: ${cidrs}`);
  return nth(primary, 1);
}
