import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { kindDown } from "../kind/lab-down.js";
import { kindKubeconfig, kindStatus } from "../kind/lab-status.js";
import { kindLogsArgs } from "../kind/logs.js";
import { kindToolsOnThisMachine } from "../kind/machine-tools.js";
import { readKindState } from "../kind/state.js";
import { withLabLock } from "../lock.js";
import { labDown } from "../netns/lab-down.js";
import { labStatus } from "../netns/lab-status.js";
import { labPaths, readLabRuntime, readLabState } from "../netns/state.js";
import type { Command } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";

async function downOn(dir: string, keep: boolean): Promise<number> {
  if (!existsSync(dir)) {
    console.log(`no lab in ${dir}`);
    return 0;
  }
  if (readLabRuntime(dir) === "kind") {
    for (const r of await kindDown(dir, { keepFiles: keep })) console.log(`removed ${r}`);
    return 0;
  }
  const result = await labDown(dir, { keepFiles: keep });
  for (const r of result.removed) console.log(`removed ${r}`);
  return 0;
}

export const downCommand: Command = {
  name: "down",
  group: "Lab",
  summary: "remove everything up created: nodes, pods, the control plane, rules and links",
  description:
    "Removes the lab in the state folder, whichever runtime brought it up: on netns the node and pod " +
    "namespaces, their links and routes, the agents and the control plane; on kind the node containers. It " +
    "says what it removed. Without a lab it says so and exits 0.",
  flags: [labStateDirFlag, { name: "keep", help: "keep the state folder's logs and certificates" }],
  examples: [
    "sudo switchyard-lab down",
    "sudo switchyard-lab down --keep   # logs stay for switchyard-lab logs",
  ],
  run: (inv) => {
    const dir = labDir(inv.string("state-dir"));
    return withLabLock(dir, "down", () => downOn(dir, inv.bool("keep")));
  },
};

export const statusCommand: Command = {
  name: "status",
  group: "Lab",
  summary: "the lab's stack, nodes (Ready, zone, pod CIDR) and pods",
  description:
    "Prints the lab's runtime and stack, each node (Ready or not, zone, pod CIDR; on netns its agent's pid) " +
    "and the pods. Exits 1 when the lab is not healthy (no lab, a node not Ready, an agent gone).",
  flags: [labStateDirFlag],
  examples: ["switchyard-lab status"],
  async run(inv) {
    const dir = labDir(inv.string("state-dir"));
    const status = readLabRuntime(dir) === "kind" ? await kindStatus(dir) : await labStatus(dir);
    console.log(status.text);
    return status.healthy ? 0 : 1;
  },
};

export const kubeconfigCommand: Command = {
  name: "kubeconfig",
  group: "Lab",
  summary: "the path of the lab's admin kubeconfig",
  description:
    "Prints the path of the lab's admin kubeconfig (what switchyard-lab kubectl uses), for kubectl of your own " +
    "or any other client.",
  flags: [labStateDirFlag],
  examples: ['kubectl --kubeconfig "$(switchyard-lab kubeconfig)" get nodes'],
  async run(inv) {
    const dir = labDir(inv.string("state-dir"));
    if (readLabRuntime(dir) === "kind") {
      console.log(await kindKubeconfig(dir));
      return 0;
    }
    const state = readLabState(dir);
    if (!state?.kubeconfig) throw new Error(`no lab in ${dir}; run switchyard-lab up`);
    console.log(state.kubeconfig);
    return 0;
  },
};

/** A component's log: control-plane components and agents by name, pods' containers by namespace/pod[/container]. */
function logFile(dir: string, component: string): string {
  const paths = labPaths(dir);
  const candidates = [
    join(paths.logs, `${component}.log`),
    join(paths.controlPlane, "logs", `${component}.log`),
  ];
  const [ns, pod, container] = component.split("/");
  if (ns && pod && existsSync(paths.pods)) {
    const podDir = readdirSync(paths.pods).find((d) => d.startsWith(`${ns}_${pod}_`));
    if (podDir) {
      const logs = readdirSync(join(paths.pods, podDir)).filter((f) => f.endsWith(".log"));
      const file = container ? `${container}.log` : logs[0];
      if (file) candidates.push(join(paths.pods, podDir, file));
    }
  }
  if (!existsSync(dir)) throw new Error(`no lab in ${dir}; run switchyard-lab up`);
  const found = candidates.find((f) => existsSync(f));
  if (!found) throw new Error(`no log for "${component}" in ${dir}`);
  return found;
}

export const logsCommand: Command = {
  name: "logs",
  group: "Lab",
  summary: "a component's log: the control plane's, a node agent's, or a pod's container's",
  description:
    "Prints a component's log. On netns the lab keeps every log in its state folder (also after a failed up, " +
    "and after down --keep); on kind control-plane components are pods, read with kubectl logs.",
  args: [
    {
      name: "COMPONENT",
      help:
        "etcd, kube-apiserver, kube-controller-manager, kube-scheduler, agent-node-<n> (netns), upstream-dns " +
        "(netns), or <namespace>/<pod>[/<container>]",
      choices: () => ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"],
    },
  ],
  flags: [labStateDirFlag],
  examples: [
    "sudo switchyard-lab logs kube-apiserver",
    "sudo switchyard-lab logs agent-node-2",
    "sudo switchyard-lab logs kube-system/coredns-7c9f8d6b5-x2x8z",
  ],
  async run(inv) {
    const [component = ""] = inv.positionals;
    const dir = labDir(inv.string("state-dir"));
    const kind = readKindState(dir);
    if (kind) {
      const { kubectl } = await kindToolsOnThisMachine(process.stderr);
      const args = ["--kubeconfig", kind.kubeconfig, ...kindLogsArgs(component, kind.input.name)];
      return spawnSync(kubectl, args, { stdio: "inherit" }).status ?? 1;
    }
    process.stdout.write(readFileSync(logFile(dir, component), "utf8"));
    return 0;
  },
};
