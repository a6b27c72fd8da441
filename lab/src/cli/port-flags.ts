import { type ControlPlanePorts, defaultPorts } from "@switchyard/testbed/controlplane";
import type { FlagSpec, Invocation } from "./command.js";
import { portFlag } from "./usage.js";

/**
 * The control plane's ports as flags, for `controlplane up` and the netns `up`: a port another process holds is
 * refused at start with a line naming the flag that moves it (controlplane/components.ts), so both commands take
 * the same names.
 */
const portFlags: readonly { key: keyof ControlPlanePorts; name: string; what: string }[] = [
  { key: "apiserver", name: "apiserver-port", what: "kube-apiserver's secure port" },
  { key: "etcdClient", name: "etcd-port", what: "etcd's client port" },
  { key: "etcdPeer", name: "etcd-peer-port", what: "etcd's peer port" },
  {
    key: "controllerManager",
    name: "controller-manager-port",
    what: "kube-controller-manager's secure port",
  },
  { key: "scheduler", name: "scheduler-port", what: "kube-scheduler's secure port" },
];

/** The flag specs, each help prefixed (e.g. "netns only: "). */
export function controlPlanePortFlags(prefix = ""): FlagSpec[] {
  return portFlags.map((p) => ({
    name: p.name,
    value: "PORT",
    default: String(defaultPorts[p.key]),
    help: `${prefix}${p.what}`,
  }));
}

export const controlPlanePortFlagNames = portFlags.map((p) => p.name);

/** The ports given on the command line; a port that is not 1-65535 is a usage error naming `cmd`. */
export function controlPlanePorts(cmd: string, inv: Invocation): Partial<ControlPlanePorts> {
  const out: Partial<ControlPlanePorts> = {};
  for (const p of portFlags) {
    const value = portFlag(cmd, p.name, inv.string(p.name));
    if (value !== undefined) out[p.key] = value;
  }
  return out;
}
