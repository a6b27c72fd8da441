import { cidrRange } from "@switchyard/basics";
import { defaultStateDir, down, status, up, withDefaults } from "@switchyard/testbed/controlplane";
import { resolveBinary } from "@switchyard/testbed/upstream";
import type { Command, FlagSpec, Invocation } from "./command.js";
import { controlPlaneDir } from "./flags.js";
import { controlPlanePortFlags, controlPlanePorts } from "./port-flags.js";
import { UsageError } from "./usage.js";

const defaults = withDefaults();

const stateDirFlag: FlagSpec = {
  name: "state-dir",
  value: "DIR",
  default: `SWITCHYARD_STATE_DIR, else ${defaultStateDir({ ...process.env, SWITCHYARD_STATE_DIR: "" })}`,
  help: "where certificates, kubeconfigs, etcd data and logs go",
  complete: "dir",
};

const upFlags: FlagSpec[] = [
  stateDirFlag,
  { name: "no-controller-manager", help: "start without kube-controller-manager" },
  { name: "no-scheduler", help: "start without kube-scheduler" },
  { name: "bind-address", value: "IP", default: defaults.bindAddress, help: "where every component listens" },
  {
    name: "advertise-address",
    value: "IP",
    default: "the bind address",
    help: "the apiserver's address in the kubernetes Service (and in its serving certificate)",
  },
  ...controlPlanePortFlags(),
  { name: "service-cidr", value: "CIDR", default: defaults.serviceCidr, help: "ClusterIPs" },
  {
    name: "cluster-cidr",
    value: "CIDR",
    default: defaults.clusterCidr,
    help: "pod addresses (node CIDRs come from it)",
  },
  {
    name: "timeout",
    value: "SECONDS",
    default: String(defaults.readyTimeoutMs / 1000),
    help: "how long to wait for the apiserver's /readyz",
  },
];

async function runUp(inv: Invocation): Promise<number> {
  const cmd = "controlplane up";
  const flag = (name: string) => inv.string(name);
  const ports = controlPlanePorts(cmd, inv);
  const timeout = flag("timeout") === undefined ? undefined : Number(flag("timeout"));
  if (timeout !== undefined && !(timeout > 0))
    throw new UsageError(`${cmd}: --timeout must be a number of seconds, got "${flag("timeout")}"`);
  // Each entry must be a CIDR (the certificates are made from the first); which ranges the apiserver accepts
  // (size, families) is its own decision, and its error is shown as it says it.
  for (const name of ["service-cidr", "cluster-cidr"]) {
    for (const entry of flag(name)?.split(",") ?? []) {
      try {
        cidrRange(entry);
      } catch {
        throw new UsageError(`${cmd}: --${name} takes CIDRs separated by commas, got "${flag(name)}"`);
      }
    }
  }
  const state = await up({
    stateDir: controlPlaneDir(flag("state-dir")),
    ...(flag("bind-address") ? { bindAddress: flag("bind-address") } : {}),
    ...(flag("advertise-address") ? { advertiseAddress: flag("advertise-address") } : {}),
    ...(flag("service-cidr") ? { serviceCidr: flag("service-cidr") } : {}),
    ...(flag("cluster-cidr") ? { clusterCidr: flag("cluster-cidr") } : {}),
    ...(timeout ? { readyTimeoutMs: timeout * 1000 } : {}),
    ports,
    controllerManager: !inv.bool("no-controller-manager"),
    scheduler: !inv.bool("no-scheduler"),
  });
  const kubectl = resolveBinary("kubectl").path;
  console.log(`control plane ready in ${state.startSeconds.toFixed(1)}s at ${state.server}`);
  console.log(`kubeconfig: ${state.kubeconfig}`);
  console.log(
    kubectl ? `kubectl:    ${kubectl}` : "kubectl:    not found (npx switchyard-lab upstream build)",
  );
  console.log(`try:        ${kubectl ?? "kubectl"} --kubeconfig ${state.kubeconfig} get --raw /readyz`);
  console.log(
    '            eval "$(npx switchyard-lab env)"   # kubectl on PATH and KUBECONFIG set in this shell',
  );
  return 0;
}

const upCmd: Command = {
  name: "up",
  summary: "start etcd, kube-apiserver, kube-controller-manager and kube-scheduler on loopback",
  description:
    "Starts a control plane from the upstream binaries: a CA and certificates, etcd, kube-apiserver, " +
    "kube-controller-manager (without its EndpointSlice controllers: Switchyard's replaces them) and " +
    "kube-scheduler, as detached processes logging to <state-dir>/logs; waits for /readyz and prints the " +
    "kubeconfig's path. A failed up stops whatever it had started.",
  flags: upFlags,
  examples: [
    "switchyard-lab controlplane up",
    "# beside another control plane",
    "switchyard-lab controlplane up --state-dir /tmp/cp2 --apiserver-port 7443 --etcd-port 3379 --etcd-peer-port 3380 --controller-manager-port 11257 --scheduler-port 11259",
  ],
  run: runUp,
};

const downCmd: Command = {
  name: "down",
  summary: "stop what controlplane up started and remove its state folder",
  description:
    "Stops the processes controlplane up started (each pid is checked to still run the command it started), " +
    "checks nothing is left, and removes the state folder unless --keep.",
  flags: [stateDirFlag, { name: "keep", help: "keep the state folder (etcd data, certificates, logs)" }],
  examples: ["switchyard-lab controlplane down", "switchyard-lab controlplane down --keep"],
  async run(inv) {
    const dir = controlPlaneDir(inv.string("state-dir"));
    const result = await down(dir, inv.bool("keep"));
    if (result.stopped.length === 0) console.log(`nothing was running from ${dir}`);
    for (const s of result.stopped) console.log(`${s.name}: ${s.result}`);
    console.log(result.removed ? `removed ${dir}` : `kept ${dir}`);
    return 0;
  },
};

const statusCmd: Command = {
  name: "status",
  summary: "each component's process and what its health endpoint answers",
  description:
    "Prints the server and kubeconfig, then each component's pid, whether it runs, and what its health " +
    "endpoint answers. Exits 1 when there is no control plane or a component is not running.",
  flags: [stateDirFlag],
  examples: ["switchyard-lab controlplane status"],
  async run(inv) {
    const dir = controlPlaneDir(inv.string("state-dir"));
    const { state, components } = await status(dir);
    if (!state) {
      console.log(`no control plane in ${dir}; run switchyard-lab controlplane up`);
      return 1;
    }
    console.log(`server:     ${state.server}\nkubeconfig: ${state.kubeconfig}`);
    for (const c of components) {
      console.log(
        `${c.name.padEnd(24)} pid ${String(c.pid).padEnd(8)} ${c.running ? "running" : "stopped"}  ${c.health}`,
      );
    }
    return components.every((c) => c.running) ? 0 : 1;
  },
};

export const controlplaneCommand: Command = {
  name: "controlplane",
  group: "Control plane and binaries",
  summary: "a control plane alone, from the upstream binaries, on loopback (no nodes)",
  description:
    "A Kubernetes control plane alone (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) from " +
    "the upstream binaries, on loopback: for trying the apps against a real apiserver without a lab. No root.",
  subcommands: [upCmd, downCmd, statusCmd],
  examples: [
    "switchyard-lab controlplane up",
    "switchyard-lab kubectl get ns",
    "switchyard-lab controlplane down",
  ],
};
