import { spawnSync } from "node:child_process";
import type { Command } from "./command.js";
import { kubeconfigLabFlag, labEnv, labKubeconfig, labPath } from "./lab-env.js";

/** kubectl commands that need no cluster; anything else without a lab would only fail on localhost:8080. */
const CLIENT_ONLY = new Set(["help", "completion", "options", "config", "plugin", "kustomize"]);

/**
 * Whether kubectl's arguments need a cluster's kubeconfig: not for its help, its client-only commands,
 * `version --client`, or a command line that names its own `--kubeconfig` or `--server`.
 */
export function kubectlNeedsCluster(args: readonly string[]): boolean {
  const word = args.find((a) => !a.startsWith("-"));
  if (word === undefined || CLIENT_ONLY.has(word)) return false;
  if (word === "version" && args.some((a) => a === "--client" || a.startsWith("--client="))) return false;
  const own = /^(?:-h|--help|--kubeconfig|-s|--server)(?:=|$)/;
  return !args.some((a) => own.test(a));
}

export const kubectlCommand: Command = {
  name: "kubectl",
  group: "Using the lab",
  summary: "kubectl against the lab, its kubeconfig set for you",
  description:
    "Runs kubectl (the one built from packages/testbed/upstream, or SWITCHYARD_KUBECTL, or kubectl on " +
    "PATH) with KUBECONFIG set to the lab's admin kubeconfig: the lab cluster's when one is up " +
    "(SWITCHYARD_LAB_DIR, else the default folder), else a bare control plane's (SWITCHYARD_STATE_DIR, " +
    "else its default). Every argument goes to kubectl; only a lone --help prints this, so `switchyard-lab " +
    "kubectl get --help` is kubectl's help for get. Exits with kubectl's code. With neither a lab nor a control " +
    "plane up, a command that needs a cluster is one line saying so (exit 1) instead of kubectl's localhost:8080 " +
    "errors.",
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
    const cluster = labKubeconfig();
    if (!cluster.kubeconfig && kubectlNeedsCluster(inv.passthrough)) {
      throw new Error(
        `kubectl: no lab in ${cluster.labDir} and no control plane in ${cluster.controlPlaneDir}; run switchyard-lab up first`,
      );
    }
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
    "Prints export lines that put the project's Node, kubectl and switchyard-lab first on PATH and set " +
    "KUBECONFIG to the lab's (as switchyard-lab kubectl picks it), for eval in a POSIX shell. switchyard-lab is a link in the cache's bin " +
    "folder to this checkout's lab/bin/switchyard-lab.js.",
  flags: [kubeconfigLabFlag],
  examples: ['eval "$(npx switchyard-lab env)"', "kubectl get nodes"],
  async run(inv) {
    const e = labEnv(inv.string("state-dir"));
    console.log(`export PATH="${labPath(e, "$PATH")}"`);
    if (e.kubeconfig) console.log(`export KUBECONFIG="${e.kubeconfig}"`);
    else console.error("# no lab or control plane is up: KUBECONFIG not set; run switchyard-lab up");
    return 0;
  },
};
