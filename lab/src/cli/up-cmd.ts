import { readVersions } from "@switchyard/testbed/upstream";
import { defaultKindTimeoutSeconds, kindLabUp } from "../kind/lab-up.js";
import { defaultKindInput } from "../kind/options.js";
import { machineFacts } from "../kind/probes.js";
import { type LabRuntime, labRuntimes, selectRuntime } from "../kind/select-runtime.js";
import { withLabLock } from "../lock.js";
import { defaultNetnsReadyTimeoutMs, labUp } from "../netns/lab-up.js";
import { defaultLabInput, type IpFamily, ipFamilies, networksFor } from "../netns/plan.js";
import { readLabRuntime } from "../netns/state.js";
import { type ProxyMode, proxyModes, type StackKind, stackKinds } from "../stack/manifests.js";
import type { Command, FlagSpec, Invocation } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";
import { kindUpSummary } from "./kind-up-summary.js";
import { controlPlanePortFlagNames, controlPlanePortFlags, controlPlanePorts } from "./port-flags.js";
import { upSummary } from "./up-summary.js";
import { positiveIntFlag, UsageError } from "./usage.js";

const defaultProxyMode: ProxyMode = "iptables";
const defaultStack: StackKind = "switchyard";
const kindDefaults = defaultKindInput(readVersions());

const netnsOnlyFlags = ["prefix", "node-cidr", ...controlPlanePortFlagNames];
const kindOnlyFlags = ["name", "node-image"] as const;

const flags: FlagSpec[] = [
  {
    name: "runtime",
    value: "RUNTIME",
    choices: labRuntimes,
    default: "netns where it works, else kind",
    help: "netns: nodes and pods are network namespaces of this machine (Linux, root); kind: nodes are Docker containers (a Docker engine that docker info reaches)",
  },
  {
    name: "nodes",
    value: "N",
    default: String(defaultLabInput.nodes),
    help: "nodes that run pods (kind adds its control-plane node)",
  },
  {
    name: "zones",
    value: "N",
    default: String(defaultLabInput.zones),
    help: "zones the nodes take in turn (zone-a, zone-b, ...)",
  },
  {
    name: "proxy-mode",
    value: "MODE",
    choices: proxyModes,
    default: defaultProxyMode,
    help: "kube-proxy's mode; ebpf is Switchyard's own (BPF programs on each node's cgroup balance its pods' sockets), not with --stack upstream",
  },
  {
    name: "stack",
    value: "STACK",
    choices: stackKinds,
    default: defaultStack,
    help: "Switchyard's stack from apps/<app>/deploy, or upstream's: kubeadm's kube-proxy and CoreDNS addons and kube-controller-manager's slice controllers (on kind with Switchyard's images loaded, to swap in)",
  },
  { name: "no-stack", help: "nodes only, no stack" },
  labStateDirFlag,
  {
    name: "cluster-cidr",
    value: "CIDR",
    default: `${defaultLabInput.clusterCidr} (ipv6: ${networksFor("ipv6").clusterCidr}; dual: both)`,
    help: "pod addresses, one range per family, comma-separated; each node gets a /24 (IPv6: a /64)",
  },
  {
    name: "service-cidr",
    value: "CIDR",
    default: `${defaultLabInput.serviceCidr} (ipv6: ${networksFor("ipv6").serviceCidr}; dual: both)`,
    help: "ClusterIPs, one range per family, comma-separated",
  },
  {
    name: "ip-family",
    value: "FAMILY",
    choices: ipFamilies,
    default: "ipv4",
    help: "the cluster's address families, as kind's networking.ipFamily: every node and pod gets an address of each, dual-stack Services a ClusterIP of each (dual: IPv4 primary); the CIDR defaults follow it. On kind, kind's Docker network gets an IPv6 range",
  },
  {
    name: "timeout",
    value: "SECONDS",
    default: `${defaultNetnsReadyTimeoutMs / 1000} on netns, ${defaultKindTimeoutSeconds} on kind`,
    help: "how long to wait: netns, for the control plane, then for the nodes and the stack together; kind, for each step",
  },
  {
    name: "prefix",
    value: "NAME",
    default: defaultLabInput.prefix,
    help: "netns only: the prefix of the lab's namespaces and links",
  },
  {
    name: "node-cidr",
    value: "CIDR",
    default: `${defaultLabInput.nodeCidr} (ipv6: ${networksFor("ipv6").nodeCidr}; dual: both)`,
    help: "netns only: the node network on the lab's bridge, one range per family",
  },
  // A second lab beside the first (another --prefix, --node-cidr and --state-dir) needs ports of its own.
  ...controlPlanePortFlags("netns only: "),
  {
    name: "name",
    value: "NAME",
    default: kindDefaults.name,
    help: "kind only: the cluster's name; the node containers are named after it",
  },
  {
    name: "node-image",
    value: "IMAGE",
    default: kindDefaults.nodeImage,
    help: "kind only: the image every node runs: present, else pulled; the default one is built here (Linux, root) when it cannot be pulled",
  },
];

/** --runtime, or the default for this machine (see kind/select-runtime.ts); a one-line error when none works. */
async function chooseRuntime(flag: string | undefined): Promise<LabRuntime> {
  if (flag !== undefined) return flag as LabRuntime;
  const chosen = await selectRuntime(machineFacts());
  if ("error" in chosen) throw new Error(chosen.error);
  console.error(`switchyard-lab: runtime ${chosen.runtime} (the default here; --runtime chooses)`);
  return chosen.runtime;
}

interface UpChoices {
  nodes?: number;
  zones?: number;
  timeout?: number;
  proxyMode: ProxyMode;
  stackKind: StackKind;
}

async function runUp(inv: Invocation): Promise<number> {
  if (inv.string("stack") !== undefined && inv.bool("no-stack"))
    throw new UsageError("up: --stack and --no-stack contradict each other; give one");
  const o: UpChoices = {
    nodes: positiveIntFlag("up", "nodes", inv.string("nodes")),
    zones: positiveIntFlag("up", "zones", inv.string("zones")),
    timeout: positiveIntFlag("up", "timeout", inv.string("timeout")),
    proxyMode: (inv.string("proxy-mode") as ProxyMode | undefined) ?? defaultProxyMode,
    stackKind: (inv.string("stack") as StackKind | undefined) ?? defaultStack,
  };
  const runtime = await chooseRuntime(inv.string("runtime"));
  const foreign = runtime === "kind" ? netnsOnlyFlags : kindOnlyFlags;
  const misplaced = foreign.find((f) => inv.string(f) !== undefined);
  if (misplaced) throw new UsageError(`up: --${misplaced} does not apply to the ${runtime} runtime`);
  const dir = labDir(inv.string("state-dir"));
  const existing = readLabRuntime(dir);
  if (existing && existing !== runtime)
    throw new Error(
      `a ${existing} lab is up in ${dir}; run switchyard-lab down first, or pick another --state-dir`,
    );
  return withLabLock(dir, "up", () => (runtime === "kind" ? upKind(dir, inv, o) : upNetns(dir, inv, o)));
}

async function upKind(dir: string, inv: Invocation, o: UpChoices): Promise<number> {
  const ipFamily = (inv.string("ip-family") as IpFamily | undefined) ?? "ipv4";
  const state = await kindLabUp({
    stateDir: dir,
    input: {
      ipFamily,
      ...(o.nodes ? { nodes: o.nodes } : {}),
      ...(o.zones ? { zones: o.zones } : {}),
      ...(inv.string("name") ? { name: inv.string("name") } : {}),
      ...(inv.string("node-image") ? { nodeImage: inv.string("node-image") } : {}),
      ...(inv.string("cluster-cidr") ? { clusterCidr: inv.string("cluster-cidr") } : {}),
      ...(inv.string("service-cidr") ? { serviceCidr: inv.string("service-cidr") } : {}),
    },
    ...(o.timeout ? { timeoutSeconds: o.timeout } : {}),
    ...(inv.bool("no-stack") ? {} : { stack: o.proxyMode, stackKind: o.stackKind }),
  });
  console.log(kindUpSummary(state, dir));
  return 0;
}

async function upNetns(dir: string, inv: Invocation, o: UpChoices): Promise<number> {
  const ipFamily = (inv.string("ip-family") as IpFamily | undefined) ?? "ipv4";
  const networks = networksFor(ipFamily);
  const state = await labUp({
    stateDir: dir,
    lab: {
      ...(o.nodes ? { nodes: o.nodes } : {}),
      ...(o.zones ? { zones: o.zones } : {}),
      prefix: inv.string("prefix") ?? defaultLabInput.prefix,
      ipFamily,
      nodeCidr: inv.string("node-cidr") ?? networks.nodeCidr,
      clusterCidr: inv.string("cluster-cidr") ?? networks.clusterCidr,
      serviceCidr: inv.string("service-cidr") ?? networks.serviceCidr,
    },
    ...(o.timeout ? { readyTimeoutMs: o.timeout * 1000 } : {}),
    ports: controlPlanePorts("up", inv),
    ...(inv.bool("no-stack") ? {} : { stack: o.proxyMode, stackKind: o.stackKind }),
  });
  console.log(upSummary(state, dir));
  return 0;
}

export const upCommand: Command = {
  name: "up",
  group: "Lab",
  summary: "bring a lab up: a control plane, nodes, and Switchyard's stack deployed from its manifests",
  description:
    "Brings a lab cluster up: a real control plane (kube-apiserver, etcd, kube-controller-manager, " +
    "kube-scheduler built from packages/testbed/upstream), nodes that run pods, and Switchyard's stack " +
    "(slice controller, kube-proxy, cluster DNS) deployed from apps/<app>/deploy, then prints the nodes, " +
    "the kubeconfig and what to try next.\n\nRuntimes: netns (nodes and pods are network namespaces of " +
    "this machine; Linux, root) and kind (nodes are Docker containers; a Docker engine and kubectl, no " +
    "kind CLI).",
  flags,
  examples: [
    "# the default: 3 nodes in 2 zones, Switchyard's stack, kube-proxy in iptables mode",
    "sudo switchyard-lab up",
    "# nftables mode, 5 nodes in 3 zones",
    "sudo switchyard-lab up --nodes 5 --zones 3 --proxy-mode nftables",
    "# ebpf mode: socket-level balancing in BPF programs, per node cgroup",
    "sudo switchyard-lab up --proxy-mode ebpf",
    "# on Docker (Mac, Windows, Linux without root)",
    "switchyard-lab up --runtime kind",
    "# dual-stack: an IPv4 and an IPv6 address for every node and pod, on either runtime",
    "switchyard-lab up --runtime kind --ip-family dual",
    "# upstream's kube-proxy and CoreDNS, to compare with",
    "sudo switchyard-lab up --stack upstream",
  ],
  run: runUp,
};
