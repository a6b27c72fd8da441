import { spawnSync } from "node:child_process";
import type { Command } from "./command.js";
import { kubeconfigLabFlag, labEnv, labPath } from "./lab-env.js";

export const kubectlCommand: Command = {
  name: "kubectl",
  group: "Using the lab",
  summary: "kubectl against the lab, its kubeconfig set for you",
  description:
    "Runs kubectl (the one built from packages/testbed/upstream, or SWITCHYARD_KUBECTL, or kubectl on " +
    "PATH) with KUBECONFIG set to the lab's admin kubeconfig: the lab cluster's when one is up " +
    "(SWITCHYARD_LAB_DIR, else the default folder), else a bare control plane's (SWITCHYARD_STATE_DIR, " +
    "else its default). Every argument goes to kubectl; only a lone --help prints this, so `switchyard-lab " +
    "kubectl get --help` is kubectl's help for get. Exits with kubectl's code.",
  synopsis: "KUBECTL_ARGS...",
  passthrough: "all",
  args: [
    { name: "KUBECTL_ARGS", help: "kubectl's arguments, as you would give them to kubectl", variadic: true },
  ],
  examples: [
    "switchyard-lab kubectl get pods -A -o wide",
    "switchyard-lab kubectl -n kube-system logs ds/kube-proxy",
    "switchyard-lab kubectl help",
  ],
  async run(inv) {
    const e = labEnv();
    const env = { ...process.env, ...(e.kubeconfig ? { KUBECONFIG: e.kubeconfig } : {}) };
    return spawnSync(e.kubectl, [...inv.passthrough], { stdio: "inherit", env }).status ?? 1;
  },
};

export const envCommand: Command = {
  name: "env",
  group: "Using the lab",
  summary: 'shell lines for eval "$(switchyard-lab env)": kubectl and switchyard-lab on PATH, KUBECONFIG',
  description:
    "Prints export lines that put kubectl and switchyard-lab on PATH and set KUBECONFIG to the lab's (as " +
    "switchyard-lab kubectl picks it), for eval in a POSIX shell. switchyard-lab is a link in the cache's bin " +
    "folder to this checkout's lab/bin/switchyard-lab.js.",
  flags: [kubeconfigLabFlag],
  examples: ['eval "$(npx switchyard-lab env)"', "kubectl get nodes"],
  async run(inv) {
    const e = labEnv(inv.string("state-dir"));
    console.log(`export PATH="${labPath(e, "$PATH")}"`);
    if (e.kubeconfig) console.log(`export KUBECONFIG="${e.kubeconfig}"`);
    else console.error("# no lab or control plane is up: KUBECONFIG not set (switchyard-lab up)");
    return 0;
  },
};
